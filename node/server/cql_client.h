#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/cql/connection.h"
#include "node/server/cql_server.h"
#include "node/tls/socket_stream.h"

namespace charybdis::node {

// One connection of the CQL server: its socket, in clear or through TLS,
// the bytes read but not yet framed, and the bytes to write that the
// socket did not take yet.
struct CqlServer::Client {
  // Past this much unwritten output, stop reading the client's requests
  // until it reads its answers.
  static constexpr size_t kMaxPendingOutput = 16 << 20;
  // A connection that has not finished its TLS handshake by then (or, on
  // a port where TLS is optional, not sent its first byte) is closed: a
  // stalled handshake holds a socket and nothing else.
  static constexpr auto kHandshakeTimeout = std::chrono::seconds(10);

  int fd = -1;
  int epoll = -1;
  std::string peer;  // the client's address, for logs
  std::string input;  // the epoll thread's only
  std::unique_ptr<cql::Connection> connection;
  std::chrono::steady_clock::time_point ready_by;
  std::mutex mutex;  // guards what follows
  // Null until the first byte tells TLS from clear (Tls.clients OPTIONAL).
  std::unique_ptr<SocketStream> stream;
  std::string output;
  uint32_t interest = EPOLLIN;  // what epoll watches for
  bool closing = false;  // after a protocol error: close once written
  bool closed = false;

  // Appends what the socket has to `input`; false once the client is gone
  // or its TLS failed (`why` says which, starting "TLS" for the latter).
  // The first byte tells a TLS handshake from clear CQL: `tls` is for the
  // former (null: none taken), `clear_allowed` says whether the latter is.
  bool ReadAvailable(TlsContext* tls, bool clear_allowed, std::string& why);
  // Neither clear nor through a finished TLS handshake yet.
  bool Unready();
  // A TLS read waits for the socket to take a handshake message, and
  // reading is not held back (closing, or too much output).
  bool ReadWaitsForOutput();
  // Writes what the socket takes now. REQUIRES: mutex held.
  void Flush();
  // Reads while it may, waits to write while output is left. REQUIRES:
  // mutex held.
  void UpdateInterest();
  // Any thread: the socket takes what it can now, epoll says when it
  // takes the rest.
  void Send(std::string frame);
};

}  // namespace charybdis::node
