#include "node/tls/socket_stream.h"

#include <openssl/err.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::node {

namespace {

bool WouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK; }

int ClampToInt(size_t size) { return static_cast<int>(std::min<size_t>(size, INT_MAX)); }

}  // namespace

SocketStream::SocketStream(int fd) : fd_(fd) {}

SocketStream::SocketStream(int fd, std::shared_ptr<SSL_CTX> context, TlsSide side)
    : fd_(fd), context_(std::move(context)), ssl_(SSL_new(context_.get())) {
  CHARYBDIS_ASSERT(ssl_ != nullptr);
  CHARYBDIS_ASSERT(SSL_set_fd(ssl_, fd_) == 1);
  if (side == TlsSide::kServer) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
}

SocketStream::~SocketStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

void SocketStream::Fail(std::string why) {
  if (failure_.empty()) failure_ = std::move(why);
}

ssize_t SocketStream::Read(char* buffer, size_t size) {
  if (!failure_.empty()) return -1;
  if (ssl_ == nullptr) {
    while (true) {
      const ssize_t got = recv(fd_, buffer, size, MSG_DONTWAIT);
      if (got > 0) return got;
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && WouldBlock()) return 0;
      Fail(got == 0 ? "closed by the peer" : strerror(errno));
      return -1;
    }
  }
  // TLS hands out one record per call: go on while OpenSSL holds more, as
  // one recv would take it all; what the socket still holds, epoll tells.
  size_t total = 0;
  wants_writable_ = false;
  const bool write_waits_for_peer = wants_readable_;  // a Write's to keep
  while (total < size) {
    ERR_clear_error();
    const int got = SSL_read(ssl_, buffer + total, ClampToInt(size - total));
    if (got > 0) {
      total += static_cast<size_t>(got);
      if (SSL_has_pending(ssl_) != 1) break;
      continue;
    }
    if (!TakeTlsStop(got)) break;
  }
  wants_readable_ = write_waits_for_peer;
  read_wants_writable_ = wants_writable_;
  // Bytes before an end still count; the end is told by the next call.
  if (total > 0) return static_cast<ssize_t>(total);
  return failure_.empty() ? 0 : -1;
}

ssize_t SocketStream::Write(const char* data, size_t size) {
  if (!failure_.empty()) return -1;
  if (ssl_ == nullptr) {
    while (true) {
      const ssize_t sent = send(fd_, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent >= 0) return sent;
      if (errno == EINTR) continue;
      if (WouldBlock()) return 0;
      Fail(strerror(errno));
      return -1;
    }
  }
  size_t total = 0;
  wants_readable_ = false;
  wants_writable_ = false;
  while (total < size) {
    ERR_clear_error();
    const int sent = SSL_write(ssl_, data + total, ClampToInt(size - total));
    if (sent > 0) {
      total += static_cast<size_t>(sent);
      continue;
    }
    if (!TakeTlsStop(sent)) break;
  }
  if (total > 0) return static_cast<ssize_t>(total);
  return failure_.empty() ? 0 : -1;
}

bool SocketStream::TakeTlsStop(int result) {
  switch (SSL_get_error(ssl_, result)) {
    case SSL_ERROR_WANT_READ:
      wants_readable_ = true;
      return false;
    case SSL_ERROR_WANT_WRITE:
      wants_writable_ = true;
      return false;
    case SSL_ERROR_ZERO_RETURN:
      Fail("closed by the peer");
      return false;
    case SSL_ERROR_SYSCALL:
      if (errno == EINTR) return true;
      if (WouldBlock()) {  // the socket BIO said so without a retry flag
        wants_readable_ = true;
        return false;
      }
      Fail(errno == 0 ? "closed by the peer" : strerror(errno));
      return false;
    default:
      // A handshake refused (a certificate not signed by the CA, no
      // certificate, an expired one), or bytes that are not TLS.
      Fail(absl::StrCat("TLS: ", TakeOpenSslErrors()));
      return false;
  }
}

}  // namespace charybdis::node
