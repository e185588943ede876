#include "node/bench/cql_connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/cql/consistency_code.h"
#include "node/server/socket_address.h"
#include "node/tls/tls_context.h"

namespace charybdis::node {

using cql::Opcode;

namespace {

// Skips one [option] of result metadata (a type, with its parameters).
void SkipType(cql::Reader& in) {
  const uint16_t kind = in.UnsignedShort();
  if (kind == 0x20 || kind == 0x22) SkipType(in);
  if (kind == 0x21) {
    SkipType(in);
    SkipType(in);
  }
}

}  // namespace

CqlConnection::~CqlConnection() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (fd_ >= 0) close(fd_);
}

std::string CqlConnection::Open(const std::string& address, const std::shared_ptr<SSL_CTX>& tls,
                                const std::vector<std::string>& statements) {
  sockaddr_in to;
  if (!ParseIpv4HostPort(address, to)) return absl::StrCat("bad CQL address ", address);
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval timeout{10, 0};  // a request's deadline, as over gRPC
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) return absl::StrCat("cannot connect to ", address);
  if (tls != nullptr) {
    tls_ = tls;
    ssl_ = SSL_new(tls.get());
    SSL_set_fd(ssl_, fd_);
    ERR_clear_error();
    if (SSL_connect(ssl_) != 1) return absl::StrCat("TLS handshake with ", address, ": ", TakeOpenSslErrors());
  }
  cql::Writer startup;
  startup.Short(1);
  startup.String("CQL_VERSION");
  startup.String("3.0.0");
  if (Call(Opcode::kStartup, startup.bytes()).first != Opcode::kReady) return "STARTUP was refused";
  for (const std::string& statement : statements) {
    cql::Writer prepare;
    prepare.LongString(statement);
    auto [opcode, body] = Call(Opcode::kPrepare, prepare.bytes());
    cql::Reader result(body);
    if (opcode != Opcode::kResult || result.Int() != 4) return absl::StrCat("cannot prepare ", statement);
    ids_[statement] = result.ShortBytes();
  }
  return "";
}

std::pair<Opcode, std::string> CqlConnection::Execute(const std::string& statement,
                                                      const std::vector<std::string>& values, ConsistencyLevel level,
                                                      const CqlPaging& paging) {
  cql::Writer body;
  body.ShortBytes(ids_.at(statement));
  body.Short(cql::ToCqlConsistency(level));
  // Values, then a page size and a paging state when paging.
  uint8_t flags = 0x01;
  if (paging.page_size > 0) flags |= 0x04;
  if (paging.paging_state) flags |= 0x08;
  body.Byte(flags);
  body.Short(static_cast<uint16_t>(values.size()));
  for (const std::string& value : values) body.Bytes(value);
  if (paging.page_size > 0) body.Int(paging.page_size);
  if (paging.paging_state) body.Bytes(*paging.paging_state);
  return Call(Opcode::kExecute, body.bytes());
}

std::pair<Opcode, std::string> CqlConnection::Batch(const std::string& statement,
                                                    const std::vector<std::vector<std::string>>& rows,
                                                    ConsistencyLevel level) {
  cql::Writer body;
  body.Byte(1);  // unlogged
  body.Short(static_cast<uint16_t>(rows.size()));
  for (const std::vector<std::string>& values : rows) {
    body.Byte(1);
    body.ShortBytes(ids_.at(statement));
    body.Short(static_cast<uint16_t>(values.size()));
    for (const std::string& value : values) body.Bytes(value);
  }
  body.Short(cql::ToCqlConsistency(level));
  body.Byte(0);
  return Call(Opcode::kBatch, body.bytes());
}

std::pair<Opcode, std::string> CqlConnection::Call(Opcode opcode, const std::string& body) {
  cql::FrameHeader header;
  header.opcode = static_cast<uint8_t>(opcode);
  const std::string frame = cql::EncodeFrame(header, body);
  if (!WriteAll(frame)) return {Opcode::kError, ""};
  std::string head(cql::kHeaderBytes, '\0');
  if (!ReadAll(head)) return {Opcode::kError, ""};
  const cql::FrameHeader answer = cql::ParseHeader(head);
  std::string answer_body(answer.body_bytes, '\0');
  if (!ReadAll(answer_body)) return {Opcode::kError, ""};
  return {static_cast<Opcode>(answer.opcode), std::move(answer_body)};
}

bool CqlConnection::WriteAll(const std::string& bytes) {
  if (ssl_ != nullptr) return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) == static_cast<int>(bytes.size());
  return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

bool CqlConnection::ReadAll(std::string& buffer) {
  size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t read = ssl_ != nullptr
                             ? SSL_read(ssl_, buffer.data() + got, static_cast<int>(buffer.size() - got))
                             : recv(fd_, buffer.data() + got, buffer.size() - got, 0);
    if (read <= 0) return false;
    got += static_cast<size_t>(read);
  }
  return true;
}

CqlRowsHeader ReadRowsHeader(cql::Reader& in) {
  CqlRowsHeader header;
  const int32_t flags = in.Int();
  header.columns = in.Int();
  if (flags & 0x0002) header.paging_state = in.Bytes().bytes;
  if (!(flags & 0x0004)) {  // metadata present
    if (flags & 0x0001) {    // global table spec
      in.String();
      in.String();
    }
    for (int32_t i = 0; i < header.columns; i++) {
      if (!(flags & 0x0001)) {
        in.String();
        in.String();
      }
      in.String();
      SkipType(in);
    }
  }
  header.rows = in.Int();
  return header;
}

}  // namespace charybdis::node
