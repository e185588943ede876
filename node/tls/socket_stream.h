#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "node/tls/tls_context.h"

namespace charybdis::node {

// The bytes of one non-blocking socket, in clear or through TLS, so that
// the CQL server and the internode links read and write the same way
// either way. Through TLS the handshake runs inside the first reads and
// writes; the socket may then have to become writable for a read to go on,
// or readable for a write (wants_writable, wants_readable).
//
// Not thread-safe: one thread at a time (OpenSSL's rule for one SSL).
class SocketStream {
 public:
  // In clear.
  explicit SocketStream(int fd);
  // Through TLS with `context` (the stream keeps it alive).
  SocketStream(int fd, std::shared_ptr<SSL_CTX> context, TlsSide side);
  // Frees the TLS state; the socket stays open (its owner closes it).
  ~SocketStream();
  SocketStream(const SocketStream&) = delete;
  SocketStream& operator=(const SocketStream&) = delete;

  // Up to `size` bytes into `buffer`: how many (> 0), 0 when none can be
  // read now, -1 when the stream ended or broke (failure() says why).
  ssize_t Read(char* buffer, size_t size);
  // Writes what the socket takes of `data` now: how many bytes, or -1
  // when the stream broke. After a partial write, the next call must
  // pass the same bytes again first (they may have moved).
  ssize_t Write(const char* data, size_t size);

  bool tls() const { return ssl_ != nullptr; }
  // Bytes TLS has read but not handed out (decrypted or not): epoll does
  // not know of them (the socket is drained), so the reader must come back.
  bool buffered() const { return ssl_ != nullptr && SSL_has_pending(ssl_) == 1; }
  // Through TLS, and the handshake is not done yet.
  bool handshaking() const { return ssl_ != nullptr && !SSL_is_init_finished(ssl_); }
  // The last call stopped until the socket can be written (a handshake
  // message, or an answer TLS owes the peer).
  bool wants_writable() const { return wants_writable_; }
  // The last Read did (not a Write on a full socket): reading goes on
  // once the socket takes output.
  bool read_wants_writable() const { return read_wants_writable_; }
  // The last Write stopped until the peer sends (a handshake in progress).
  bool wants_readable() const { return wants_readable_; }
  // Empty while the stream is fine; else why it ended or broke.
  const std::string& failure() const { return failure_; }

 private:
  // Maps an SSL_read/SSL_write result that is not progress: true when the
  // call should be tried again now (an interrupted system call).
  bool TakeTlsStop(int result);
  void Fail(std::string why);

  const int fd_;
  std::shared_ptr<SSL_CTX> context_;
  SSL* ssl_ = nullptr;
  bool wants_writable_ = false;
  bool read_wants_writable_ = false;
  bool wants_readable_ = false;
  std::string failure_;
};

}  // namespace charybdis::node
