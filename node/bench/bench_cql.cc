// The benchmark's requests to a Charybdis node through CQL's native
// protocol (v4), with prepared statements, as a driver sends them: the
// same operations as node/bench/bench_charybdis.cc over gRPC, so that the two
// APIs can be measured against each other on one cluster.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/cql/consistency_code.h"
#include "core/cql/wire.h"
#include "node/bench/bench_systems.h"
#include "node/server/socket_address.h"
#include "node/tls/tls_context.h"

namespace charybdis::node {
namespace {

using cql::Opcode;

constexpr char kPut[] = "INSERT INTO bench.kv (k, v) VALUES (?, ?)";
constexpr char kGet[] = "SELECT v FROM bench.kv WHERE k = ?";
constexpr char kInsertIfNotExists[] = "INSERT INTO bench.kv (k, v) VALUES (?, ?) IF NOT EXISTS";
constexpr char kSetIf[] = "UPDATE bench.kv SET v = ? WHERE k = ? IF v = ?";
constexpr char kRowIfNotExists[] = "INSERT INTO bench.rows (k, c, v) VALUES (?, ?, ?) IF NOT EXISTS";

// One blocking connection: one request at a time, on stream 0.
class Connection {
 public:
  ~Connection() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
  }

  // Connects (through TLS with `tls`), STARTUPs and prepares every
  // statement; empty on success.
  std::string Open(const std::string& address, const std::shared_ptr<SSL_CTX>& tls) {
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
    for (const char* query : {kPut, kGet, kInsertIfNotExists, kSetIf, kRowIfNotExists}) {
      cql::Writer prepare;
      prepare.LongString(query);
      auto [opcode, body] = Call(Opcode::kPrepare, prepare.bytes());
      cql::Reader result(body);
      if (opcode != Opcode::kResult || result.Int() != 4) return absl::StrCat("cannot prepare ", query);
      ids_[query] = result.ShortBytes();
    }
    return "";
  }

  // EXECUTE of a prepared statement; the answer's opcode and body.
  std::pair<Opcode, std::string> Execute(const char* query, const std::vector<std::string>& values, ConsistencyLevel level) {
    cql::Writer body;
    body.ShortBytes(ids_.at(query));
    Parameters(body, values, level);
    return Call(Opcode::kExecute, body.bytes());
  }

  // A BATCH of one prepared statement with each set of values.
  std::pair<Opcode, std::string> Batch(const char* query, const std::vector<std::vector<std::string>>& rows,
                                       ConsistencyLevel level) {
    cql::Writer body;
    body.Byte(1);  // unlogged: the conditions make it one Paxos round anyway
    body.Short(static_cast<uint16_t>(rows.size()));
    for (const std::vector<std::string>& values : rows) {
      body.Byte(1);
      body.ShortBytes(ids_.at(query));
      body.Short(static_cast<uint16_t>(values.size()));
      for (const std::string& value : values) body.Bytes(value);
    }
    body.Short(cql::ToCqlConsistency(level));
    body.Byte(0);
    return Call(Opcode::kBatch, body.bytes());
  }

 private:
  static void Parameters(cql::Writer& out, const std::vector<std::string>& values, ConsistencyLevel level) {
    out.Short(cql::ToCqlConsistency(level));
    out.Byte(0x01);
    out.Short(static_cast<uint16_t>(values.size()));
    for (const std::string& value : values) out.Bytes(value);
  }

  std::pair<Opcode, std::string> Call(Opcode opcode, const std::string& body) {
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

  bool WriteAll(const std::string& bytes) {
    if (ssl_ != nullptr) return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) == static_cast<int>(bytes.size());
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  bool ReadAll(std::string& buffer) {
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

  int fd_ = -1;
  std::shared_ptr<SSL_CTX> tls_;
  SSL* ssl_ = nullptr;  // through TLS: blocking, as the socket is
  std::map<std::string, std::string> ids_;
};

// Skips one [option] of result metadata (a type, with its parameters).
void SkipType(cql::Reader& in) {
  const uint16_t kind = in.UnsignedShort();
  if (kind == 0x20 || kind == 0x22) SkipType(in);
  if (kind == 0x21) {
    SkipType(in);
    SkipType(in);
  }
}

// What an answer came to: an error's kind, a Rows result's first value.
Outcome OutcomeOf(const std::pair<Opcode, std::string>& answer) {
  Outcome outcome;
  cql::Reader in(answer.second);
  if (answer.first == Opcode::kError) {
    const int32_t code = in.Int();
    outcome.error = code == 0x1000   ? "UNAVAILABLE"
                    : code == 0x1100 ? "WRITE_TIMEOUT"
                    : code == 0x1200 ? "READ_TIMEOUT"
                    : code == 0x1300 ? "READ_FAILURE"
                    : code == 0x2200 ? "INVALID_REQUEST"
                    : answer.second.empty() ? "connection lost" : absl::StrCat("CQL error 0x", absl::Hex(code));
    return outcome;
  }
  const int32_t kind = in.Int();
  outcome.ok = answer.first == Opcode::kResult && in.ok();
  if (kind != 2) return outcome;  // Void
  const int32_t flags = in.Int();
  const int32_t columns = in.Int();
  if (flags & 0x0002) in.Bytes();
  if (!(flags & 0x0004)) {
    if (flags & 0x0001) {
      in.String();
      in.String();
    }
    for (int32_t i = 0; i < columns; i++) {
      if (!(flags & 0x0001)) {
        in.String();
        in.String();
      }
      in.String();
      SkipType(in);
    }
  }
  if (in.Int() > 0 && columns > 0) {
    outcome.value = in.Bytes().bytes;
    // A conditional write's first column is [applied].
    outcome.applied = outcome.value && *outcome.value == std::string(1, 1);
  }
  outcome.ok = in.ok();
  return outcome;
}

class CqlSystem : public BenchSystem {
 public:
  explicit CqlSystem(const CqlClientOptions& options) : options_(options) {
    if (options.ca_file.empty()) return;
    auto tls = ClientContextTrusting(options.ca_file);
    if (tls.ok()) {
      tls_ = *std::move(tls);
    } else {
      tls_problem_ = std::string(tls.status().message());
    }
  }

  const std::string& name() const override { return options_.name; }

  Outcome Put(const std::string& key, const std::string& value) override {
    return Run([&](Connection& c) { return c.Execute(kPut, {key, value}, options_.level); });
  }
  Outcome Get(const std::string& key) override {
    return Run([&](Connection& c) { return c.Execute(kGet, {key}, options_.level); });
  }
  Outcome SerialGet(const std::string& key) override {
    return Run([&](Connection& c) { return c.Execute(kGet, {key}, CL_SERIAL); });
  }
  Outcome CompareAndSet(const std::string& key, const std::optional<std::string>& expected,
                        const std::string& value) override {
    return Run([&](Connection& c) {
      return expected ? c.Execute(kSetIf, {value, key, *expected}, options_.level)
                      : c.Execute(kInsertIfNotExists, {key, value}, options_.level);
    });
  }
  Outcome InsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                            const std::string& value) override {
    std::vector<std::vector<std::string>> rows;
    for (const std::string& clustering_key : clustering_keys) rows.push_back({partition, clustering_key, value});
    return Run([&](Connection& c) { return c.Batch(kRowIfNotExists, rows, options_.level); });
  }

 private:
  // Each benchmark client takes a connection of its own from the pool.
  template <typename Request>
  Outcome Run(Request request) {
    std::unique_ptr<Connection> connection;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        connection = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (connection == nullptr) {
      connection = std::make_unique<Connection>();
      const std::string problem = tls_problem_.empty() ? connection->Open(options_.address, tls_) : tls_problem_;
      if (!problem.empty()) {
        Outcome failed;
        failed.error = problem;
        return failed;
      }
    }
    Outcome outcome = OutcomeOf(request(*connection));
    // A connection that lost its stream is not reused.
    if (outcome.error != "connection lost") {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(std::move(connection));
    }
    return outcome;
  }

  const CqlClientOptions options_;
  std::shared_ptr<SSL_CTX> tls_;  // null: in clear
  std::string tls_problem_;       // why the CA could not be loaded
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace

std::vector<std::string> BenchCqlSchema(uint32_t replication_factor) {
  return {absl::StrCat("CREATE KEYSPACE bench WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': ",
                       replication_factor, "}"),
          "CREATE TABLE bench.kv (k blob PRIMARY KEY, v blob)",
          "CREATE TABLE bench.rows (k blob, c blob, v blob, PRIMARY KEY (k, c))"};
}

std::unique_ptr<BenchSystem> ConnectCql(const CqlClientOptions& options) { return std::make_unique<CqlSystem>(options); }

}  // namespace charybdis::node
