#include "node/server/cql_client.h"

#include <sys/socket.h>

#include <cerrno>

namespace charybdis::node {

namespace {

// The first byte of a TLS handshake record; a CQL frame starts with its
// version (0x03 to 0x05, or 0x8x for a response), never this.
constexpr unsigned char kTlsHandshakeRecord = 0x16;

}  // namespace

bool CqlServer::Client::ReadAvailable(TlsContext* tls, bool clear_allowed, std::string& why) {
  std::lock_guard<std::mutex> lock(mutex);
  if (stream == nullptr) {
    unsigned char first = 0;
    const ssize_t peeked = recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
    if (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    if (peeked <= 0) {
      why = "closed before its first byte";
      return false;
    }
    if (first == kTlsHandshakeRecord && tls != nullptr) {
      stream = std::make_unique<SocketStream>(fd, tls->Current(), TlsSide::kServer);
    } else if (clear_allowed) {
      stream = std::make_unique<SocketStream>(fd);
    } else {
      why = "TLS: the port takes TLS only, and the client spoke in clear";
      return false;
    }
  }
  char buffer[64 * 1024];
  while (true) {
    const ssize_t got = stream->Read(buffer, sizeof(buffer));
    if (got < 0) {
      why = stream->failure();
      return false;
    }
    if (got == 0) return true;
    input.append(buffer, static_cast<size_t>(got));
  }
}

bool CqlServer::Client::Unready() {
  std::lock_guard<std::mutex> lock(mutex);
  return stream == nullptr || stream->handshaking();
}

bool CqlServer::Client::ReadWaitsForOutput() {
  std::lock_guard<std::mutex> lock(mutex);
  // Not while reading is held back: a closing connection, or one whose
  // answers pile up (EPOLLIN is off for those).
  return stream != nullptr && stream->read_wants_writable() && (interest & EPOLLIN) != 0;
}

void CqlServer::Client::Flush() {
  while (!output.empty() && !closed && stream != nullptr) {
    const ssize_t written = stream->Write(output.data(), output.size());
    if (written <= 0) break;
    output.erase(0, static_cast<size_t>(written));
  }
}

void CqlServer::Client::UpdateInterest() {
  if (closed) return;
  const bool handshake_writes = stream != nullptr && stream->wants_writable();
  const uint32_t wanted = (closing || output.size() > kMaxPendingOutput ? 0u : static_cast<uint32_t>(EPOLLIN)) |
                          (output.empty() && !handshake_writes ? 0u : static_cast<uint32_t>(EPOLLOUT));
  if (wanted == interest) return;
  interest = wanted;
  epoll_event event{};
  event.events = wanted;
  event.data.fd = fd;
  epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event);
}

void CqlServer::Client::Send(std::string frame) {
  std::lock_guard<std::mutex> lock(mutex);
  if (closed) return;
  const bool was_empty = output.empty();
  output.append(frame);
  if (was_empty) Flush();
  UpdateInterest();
}

}  // namespace charybdis::node
