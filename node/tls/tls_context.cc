#include "node/tls/tls_context.h"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "node/server/log.h"

namespace charybdis::node {

namespace {

constexpr auto kLookInterval = std::chrono::seconds(1);

// A file's identity and contents as the file system tells them cheaply:
// a rename over it (how tools replace certificates) changes the inode.
std::string Stamp(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return "missing";
  return absl::StrCat(info.st_ino, ":", info.st_size, ":", info.st_mtim.tv_sec, ".", info.st_mtim.tv_nsec);
}

std::vector<std::string> Stamps(const TlsFiles& files) {
  return {Stamp(files.certificate_file), Stamp(files.private_key_file), Stamp(files.ca_file)};
}

absl::Status Invalid(const std::string& what, const std::string& path) {
  return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": ", TakeOpenSslErrors()));
}

// An expired certificate would be refused by every peer; say so here,
// where the operator looks, rather than in every peer's log.
absl::Status CheckValidity(SSL_CTX* context, const std::string& path) {
  X509* certificate = SSL_CTX_get0_certificate(context);
  if (certificate == nullptr) return absl::InvalidArgumentError(absl::StrCat("no certificate in ", path));
  if (X509_cmp_current_time(X509_get0_notAfter(certificate)) <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("the certificate in ", path, " has expired"));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(certificate)) >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("the certificate in ", path, " is not valid yet"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<SSL_CTX>> MakeContext(const TlsFiles& files, TlsSide side, PeerCheck peers) {
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(side == TlsSide::kServer ? TLS_server_method() : TLS_client_method()),
                                   SSL_CTX_free);
  if (context == nullptr) return absl::InternalError(absl::StrCat("SSL_CTX_new: ", TakeOpenSslErrors()));
  SSL_CTX* raw = context.get();
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  // Writes go on from where a full socket stopped them, from a buffer
  // that may have moved (the output strings grow).
  SSL_CTX_set_mode(raw, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // No session tickets: nothing resumes, and an internode connection's
  // sender then reads nothing but the end of the stream.
  if (side == TlsSide::kServer) SSL_CTX_set_num_tickets(raw, 0);
  // Drivers close without TLS's close_notify; CQL and internode frames
  // tell a cut-off message themselves, so such an end is a plain close.
  SSL_CTX_set_options(raw, SSL_OP_IGNORE_UNEXPECTED_EOF);
  // One read(2) takes what the socket holds, not a record header and then
  // its body: half the system calls (SocketStream::buffered sees what
  // this leaves in OpenSSL's buffer).
  SSL_CTX_set_read_ahead(raw, 1);
  // The key first: a certificate loaded after it is checked by
  // SSL_CTX_check_private_key, whose failure says what is wrong.
  if (SSL_CTX_use_PrivateKey_file(raw, files.private_key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Invalid("private_key_file", files.private_key_file);
  }
  if (SSL_CTX_use_certificate_chain_file(raw, files.certificate_file.c_str()) != 1) {
    return Invalid("certificate_file", files.certificate_file);
  }
  if (SSL_CTX_check_private_key(raw) != 1) {
    return Invalid("private_key_file does not match the certificate:", files.private_key_file);
  }
  if (absl::Status valid = CheckValidity(raw, files.certificate_file); !valid.ok()) return valid;
  if (SSL_CTX_load_verify_locations(raw, files.ca_file.c_str(), nullptr) != 1) return Invalid("ca_file", files.ca_file);
  if (peers == PeerCheck::kRequired) {
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return context;
}

}  // namespace

std::string TakeOpenSslErrors() {
  std::string reasons;
  char text[256];
  while (const unsigned long error = ERR_get_error()) {
    ERR_error_string_n(error, text, sizeof(text));
    absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", text);
  }
  return reasons.empty() ? "no reason given" : reasons;
}

TlsContext::TlsContext(TlsFiles files, TlsSide side, PeerCheck peers)
    : files_(std::move(files)), side_(side), peers_(peers) {}

absl::StatusOr<std::shared_ptr<TlsContext>> TlsContext::Load(TlsFiles files, TlsSide side, PeerCheck peers) {
  std::shared_ptr<TlsContext> loaded(new TlsContext(std::move(files), side, peers));
  loaded->stamps_ = Stamps(loaded->files_);
  auto context = MakeContext(loaded->files_, side, peers);
  if (!context.ok()) return context.status();
  loaded->context_ = *std::move(context);
  loaded->looked_at_ = SteadyClock::now();
  return loaded;
}

std::shared_ptr<SSL_CTX> TlsContext::Current() {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = SteadyClock::now();
  if (now - looked_at_ < kLookInterval) return context_;
  looked_at_ = now;
  std::vector<std::string> stamps = Stamps(files_);
  if (stamps == stamps_) return context_;
  auto context = MakeContext(files_, side_, peers_);
  if (!context.ok()) {
    // Retried at the next look: a tool may be half-way through writing.
    if (last_failure_ != context.status().message()) {
      last_failure_ = std::string(context.status().message());
      Log("error", "tls_reload_failed", {{"why", last_failure_}, {"kept", "the certificates loaded before"}});
    }
    return context_;
  }
  context_ = *std::move(context);
  stamps_ = std::move(stamps);
  last_failure_.clear();
  reloads_++;
  Log("info", "tls_reloaded", {{"certificate_file", files_.certificate_file}});
  return context_;
}

absl::StatusOr<std::shared_ptr<SSL_CTX>> ClientContextTrusting(const std::string& ca_file) {
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (context == nullptr) return absl::InternalError(absl::StrCat("SSL_CTX_new: ", TakeOpenSslErrors()));
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  if (SSL_CTX_load_verify_locations(context.get(), ca_file.c_str(), nullptr) != 1) return Invalid("ca_file", ca_file);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_read_ahead(context.get(), 1);  // one read(2) per answer, as MakeContext's
  return context;
}

absl::StatusOr<InternodeTls> InternodeTls::Load(const TlsFiles& files) {
  auto accepting = TlsContext::Load(files, TlsSide::kServer, PeerCheck::kRequired);
  if (!accepting.ok()) return accepting.status();
  auto calling = TlsContext::Load(files, TlsSide::kClient, PeerCheck::kRequired);
  if (!calling.ok()) return calling.status();
  return InternodeTls{*std::move(accepting), *std::move(calling)};
}

uint64_t TlsContext::reloads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reloads_;
}

}  // namespace charybdis::node
