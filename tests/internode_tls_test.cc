// Internode links through mutual TLS (docs/security.md, "TLS"): messages
// flow both ways; a peer whose certificate the cluster's CA did not sign
// is refused, whichever side it is on; clear, stalled and garbage
// connections are closed while others go on; and certificates replaced on
// disk are taken by new connections, a bad replacement never.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "node/local/certificates.h"
#include "node/server/internode_frame.h"
#include "node/tls/tls_context.h"
#include "tests/internode_harness.h"

namespace charybdis::node {
namespace {

namespace fs = std::filesystem;

// Two CAs: A signs nodes 1 and 2, B signs node 3, a stranger to A's cluster.
class InternodeTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    signal(SIGPIPE, SIG_IGN);  // as the node does: OpenSSL writes with write(2)
    root_ = fs::path(getenv("TEST_TMPDIR")) / "internode_tls";
    fs::remove_all(root_);
    for (const char* ca : {"a", "b"}) {
      fs::create_directories(root_ / ca);
      ASSERT_TRUE(MakeCertificateAuthority((root_ / ca).string()).ok());
    }
    for (const auto& [ca, node] : {std::pair{"a", "node1"}, {"a", "node2"}, {"b", "node3"}}) {
      const absl::Status made = MakeNodeCertificate((root_ / ca).string(), (root_ / ca / node).string(), node,
                                                    {"127.0.0.1"});
      ASSERT_TRUE(made.ok()) << made;
    }
  }
  static TlsFiles Files(const std::string& ca, const std::string& node) {
    return TlsFiles{(root_ / ca / (node + ".pem")).string(), (root_ / ca / (node + ".key")).string(),
                    (root_ / ca / "ca.pem").string()};
  }
  static InternodeTls Tls(const std::string& ca, const std::string& node) {
    auto loaded = InternodeTls::Load(Files(ca, node));
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return *loaded;
  }
  static fs::path root_;
};

fs::path InternodeTlsTest::root_;

TEST_F(InternodeTlsTest, MessagesFlowBothWaysThroughMutualTls) {
  const std::string address1 = FreeAddress();
  const std::string address2 = FreeAddress();
  TestNode node2(2, {{1, address1}}, address2, Tls("a", "node2"));
  TestNode node1(1, {{2, address2}}, address1, Tls("a", "node1"));
  node1.SendFromShard0(Address{2, 1}, 1, 5000);
  ASSERT_TRUE(node2.AwaitReceived(5000));
  EXPECT_EQ(node2.Received(), Sequence(1, 5000));
  // 8 MB in one turn: more than a TLS record and than the socket takes.
  node1.SendFromShard0(Address{2, 1}, 5001, 13000, 1000);
  ASSERT_TRUE(node2.AwaitReceived(13000));
  EXPECT_EQ(node2.Received(), Sequence(1, 13000));
  node2.SendFromShard0(Address{1, 1}, 7, 7);
  ASSERT_TRUE(node1.AwaitReceived(1));
  EXPECT_EQ(node1.Received(), std::vector<uint64_t>{7});
}

TEST_F(InternodeTlsTest, APeerAnotherCaSignedIsRefusedWhicheverSideItIsOn) {
  const std::string address1 = FreeAddress();
  const std::string address2 = FreeAddress();
  const std::string address3 = FreeAddress();
  TestNode node2(2, {{1, address1}, {3, address3}}, address2, Tls("a", "node2"));
  TestNode stranger(3, {{2, address2}}, address3, Tls("b", "node3"));
  stranger.SendFromShard0(Address{2, 1}, 1, 10);  // node 2 refuses its certificate
  node2.SendFromShard0(Address{3, 1}, 1, 10);     // node 2 refuses the certificate it is shown
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(node2.Received().empty());
  EXPECT_TRUE(stranger.Received().empty());
  TestNode node1(1, {{2, address2}}, address1, Tls("a", "node1"));
  node1.SendFromShard0(Address{2, 1}, 11, 11);
  ASSERT_TRUE(node2.AwaitReceived(1));
  EXPECT_EQ(node2.Received(), std::vector<uint64_t>{11});
}

// A client with `context` (trusting any server) sends a good hello and a
// ping to node 2's shard 1 at `address` through TLS.
void SendPingThroughTls(const std::string& address, SSL_CTX* context) {
  SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);
  const int fd = ConnectTo(address);
  SSL* ssl = SSL_new(context);
  SSL_set_fd(ssl, fd);
  SSL_connect(ssl);  // TLS 1.3: the server's refusal comes after
  std::string bytes = EncodeHello(InternodeHello{1, 2, 1});
  Envelope ping = Ping(1);
  ping.set_from_node(1);
  ping.set_to_node(2);
  ping.set_to_shard(1);
  AppendFrame(ping, bytes);
  SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  SSL_free(ssl);
  close(fd);
}

TEST_F(InternodeTlsTest, APeerWithoutACertificateIsRefused) {
  const std::string address2 = FreeAddress();
  TestNode node2(2, {}, address2, Tls("a", "node2"));
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  SendPingThroughTls(address2, context.get());
  EXPECT_TRUE(node2.Received().empty());
}

// Whether the peer closes `fd` within 5 s, after whatever it answers (a
// TLS alert).
bool ClosedAfterAnswer(int fd) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd watched{fd, POLLIN, 0};
    char bytes[256];
    if (poll(&watched, 1, 100) == 1 && recv(fd, bytes, sizeof(bytes), 0) <= 0) return true;
  }
  return false;
}

TEST_F(InternodeTlsTest, ClearStalledAndGarbageConnectionsAreClosedAndOthersGoOn) {
  const std::string address1 = FreeAddress();
  const std::string address2 = FreeAddress();
  TestNode node2(2, {{1, address1}}, address2, Tls("a", "node2"));
  {
    TestNode clear(1, {{2, address2}}, address1);
    clear.SendFromShard0(Address{2, 1}, 1, 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(node2.Received().empty());
  }
  const int hello_in_clear = ConnectTo(address2);
  const std::string hello = EncodeHello(InternodeHello{1, 2, 1});
  ASSERT_EQ(send(hello_in_clear, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  EXPECT_TRUE(ClosedAfterAnswer(hello_in_clear));
  close(hello_in_clear);
  // A TLS record header announcing a handshake, then bytes that are none.
  const int garbage = ConnectTo(address2);
  const std::string bytes("\x16\x03\x01\x00\x08garbage!", 13);
  ASSERT_EQ(send(garbage, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  EXPECT_TRUE(ClosedAfterAnswer(garbage));
  close(garbage);
  const int stalled = ConnectTo(address2);  // a handshake that never starts
  TestNode node1(1, {{2, address2}}, address1, Tls("a", "node1"));
  node1.SendFromShard0(Address{2, 1}, 1, 3);
  ASSERT_TRUE(node2.AwaitReceived(3));
  EXPECT_EQ(node2.Received(), Sequence(1, 3));
  EXPECT_TRUE(ClosedAfterAnswer(stalled));
  close(stalled);
}

// A certificate and key that expired yesterday, signed by CA `ca_directory`,
// made with OpenSSL's API (the openssl command makes none in the past).
void WriteExpiredCertificate(const std::string& ca_directory, const std::string& certificate_path,
                             const std::string& key_path) {
  FILE* in = fopen((ca_directory + "/ca.pem").c_str(), "r");
  X509* ca = PEM_read_X509(in, nullptr, nullptr, nullptr);
  fclose(in);
  in = fopen((ca_directory + "/ca.key").c_str(), "r");
  EVP_PKEY* ca_key = PEM_read_PrivateKey(in, nullptr, nullptr, nullptr);
  fclose(in);
  ASSERT_TRUE(ca != nullptr && ca_key != nullptr);
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* certificate = X509_new();
  X509_set_version(certificate, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1);
  X509_gmtime_adj(X509_getm_notBefore(certificate), -2 * 86400);
  X509_gmtime_adj(X509_getm_notAfter(certificate), -86400);
  X509_set_pubkey(certificate, key);
  X509_NAME* name = X509_get_subject_name(certificate);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("expired"), -1, -1, 0);
  X509_set_issuer_name(certificate, X509_get_subject_name(ca));
  ASSERT_GT(X509_sign(certificate, ca_key, EVP_sha256()), 0);
  FILE* out = fopen(certificate_path.c_str(), "w");
  PEM_write_X509(out, certificate);
  fclose(out);
  out = fopen(key_path.c_str(), "w");
  PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  fclose(out);
  X509_free(certificate);
  EVP_PKEY_free(key);
  X509_free(ca);
  EVP_PKEY_free(ca_key);
}

TEST_F(InternodeTlsTest, LoadSaysWhatIsWrongWithTheFiles) {
  TlsFiles missing = Files("a", "node1");
  missing.certificate_file += ".nothing";
  auto loaded = TlsContext::Load(missing, TlsSide::kServer, PeerCheck::kRequired);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(missing.certificate_file), std::string::npos) << loaded.status();
  TlsFiles mismatched = Files("a", "node1");
  mismatched.private_key_file = Files("a", "node2").private_key_file;
  loaded = TlsContext::Load(mismatched, TlsSide::kServer, PeerCheck::kRequired);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("does not match"), std::string::npos) << loaded.status();
  const std::string expired = (root_ / "expired").string();
  WriteExpiredCertificate((root_ / "a").string(), expired + ".pem", expired + ".key");
  loaded = TlsContext::Load(TlsFiles{expired + ".pem", expired + ".key", Files("a", "node1").ca_file},
                            TlsSide::kServer, PeerCheck::kNone);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("has expired"), std::string::npos) << loaded.status();
}

TEST_F(InternodeTlsTest, APeerWhoseCertificateExpiredIsRefused) {
  const std::string address2 = FreeAddress();
  TestNode node2(2, {}, address2, Tls("a", "node2"));
  // Signed by the cluster's CA, but expired yesterday: loaded by hand, as
  // our own loader refuses it.
  const std::string expired = (root_ / "peer-expired").string();
  WriteExpiredCertificate((root_ / "a").string(), expired + ".pem", expired + ".key");
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  ASSERT_EQ(SSL_CTX_use_certificate_file(context.get(), (expired + ".pem").c_str(), SSL_FILETYPE_PEM), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey_file(context.get(), (expired + ".key").c_str(), SSL_FILETYPE_PEM), 1);
  SendPingThroughTls(address2, context.get());
  EXPECT_TRUE(node2.Received().empty());
}

TEST_F(InternodeTlsTest, ReplacedCertificatesAreTakenByNewConnectionsAndABadReplacementIsNot) {
  const fs::path directory = root_ / "reload";
  fs::create_directories(directory);
  for (const char* file : {"node1.pem", "node1.key", "ca.pem"}) {
    fs::copy_file(root_ / "a" / file, directory / file, fs::copy_options::overwrite_existing);
  }
  const TlsFiles files{(directory / "node1.pem").string(), (directory / "node1.key").string(),
                       (directory / "ca.pem").string()};
  auto loaded = TlsContext::Load(files, TlsSide::kServer, PeerCheck::kRequired);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  TlsContext& context = **loaded;
  const std::shared_ptr<SSL_CTX> first = context.Current();
  // As tools replace certificates: new files renamed over the old.
  ASSERT_TRUE(MakeNodeCertificate((root_ / "a").string(), (directory / "next").string(), "node1", {"127.0.0.1"}).ok());
  fs::rename(directory / "next.key", directory / "node1.key");
  fs::rename(directory / "next.pem", directory / "node1.pem");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::shared_ptr<SSL_CTX> second = context.Current();
  EXPECT_NE(second, first);
  EXPECT_EQ(context.reloads(), 1u);
  std::ofstream(directory / "node1.pem") << "half written\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(context.Current(), second);
  EXPECT_EQ(context.reloads(), 1u);
}

}  // namespace
}  // namespace charybdis::node
