#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace charybdis::node {

// The PEM files of one TLS endpoint (docs/security.md, "TLS").
struct TlsFiles {
  std::string certificate_file;  // this endpoint's certificate, its chain after it
  std::string private_key_file;
  std::string ca_file;  // the cluster's CA: what the other side's certificate must be signed by
};

enum class TlsSide { kServer, kClient };

// Who must show a certificate signed by the CA.
enum class PeerCheck {
  kNone,      // a CQL server: drivers show none
  kRequired,  // internode, both ways; a client checking its server
};

// An OpenSSL context made from TlsFiles, and made again when one of the
// files changes: certificates are replaced without a restart, as
// ScyllaDB's are. Files are looked at, at most once a second, when a
// connection starts. A reload that fails (a key that does not match, a
// file half written) keeps the context in use and logs why; connections
// already open keep theirs.
class TlsContext {
 public:
  // InvalidArgument naming the file and OpenSSL's reason when a file is
  // missing or unreadable, the key does not match the certificate, or the
  // certificate has expired or is not valid yet.
  static absl::StatusOr<std::shared_ptr<TlsContext>> Load(TlsFiles files, TlsSide side, PeerCheck peers);

  // The context a new connection takes. Any thread.
  std::shared_ptr<SSL_CTX> Current();
  // How many times the files were loaded again (for tests and logs).
  uint64_t reloads() const;

 private:
  using SteadyClock = std::chrono::steady_clock;
  TlsContext(TlsFiles files, TlsSide side, PeerCheck peers);

  const TlsFiles files_;
  const TlsSide side_;
  const PeerCheck peers_;
  mutable std::mutex mutex_;  // guards what follows
  std::shared_ptr<SSL_CTX> context_;
  std::vector<std::string> stamps_;  // the files' size and times when context_ was made
  SteadyClock::time_point looked_at_;
  uint64_t reloads_ = 0;
  std::string last_failure_;  // logged once per failure, not per connection
};

// Mutual TLS between nodes: the context a node accepts peers with and the
// one it calls them with. Both sides show their certificate and check the
// other's against the CA; a peer is anyone whose certificate the cluster's
// CA signed (docs/security.md says why no name is checked).
struct InternodeTls {
  std::shared_ptr<TlsContext> accepting;
  std::shared_ptr<TlsContext> calling;

  static absl::StatusOr<InternodeTls> Load(const TlsFiles& files);
};

// A client's context that shows no certificate and checks the server's
// against the CA in `ca_file` (the benchmark's CQL client).
absl::StatusOr<std::shared_ptr<SSL_CTX>> ClientContextTrusting(const std::string& ca_file);

// OpenSSL's reasons queued on this thread, oldest first, "; "-separated,
// and the queue cleared.
std::string TakeOpenSslErrors();

}  // namespace charybdis::node
