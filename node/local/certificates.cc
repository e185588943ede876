#include "node/local/certificates.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "node/local/process.h"

extern char** environ;

namespace charybdis::node {

namespace {

// Ten years: a local cluster's certificates never expire under a test.
constexpr char kValidDays[] = "3650";

// Runs openssl with `arguments`; its output goes to `log`, whose end is
// the error when it fails.
absl::Status RunOpenssl(const std::vector<std::string>& arguments, const std::string& log) {
  std::vector<std::string> words = {"openssl"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "openssl", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run openssl (Debian's package openssl): ", strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("openssl ", arguments.front(), " failed: ", Tail(log)));
}

absl::Status OwnerOnly(const std::string& path) {
  if (chmod(path.c_str(), 0600) != 0) return absl::InternalError(absl::StrCat("chmod ", path, ": ", strerror(errno)));
  return absl::OkStatus();
}

// A P-256 key: as safe as RSA-3072 and much faster to make and use.
std::vector<std::string> NewKeyArguments(const std::string& key_path) {
  return {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key_path};
}

}  // namespace

absl::Status MakeCertificateAuthority(const std::string& directory) {
  const std::string log = directory + "/openssl.log";
  std::vector<std::string> arguments = {"req", "-x509"};
  for (std::string& word : NewKeyArguments(directory + "/ca.key")) arguments.push_back(word);
  arguments.insert(arguments.end(), {"-out", directory + "/ca.pem", "-days", kValidDays, "-subj",
                                     "/O=charybdis/CN=charybdis local cluster CA"});
  if (absl::Status made = RunOpenssl(arguments, log); !made.ok()) return made;
  return OwnerOnly(directory + "/ca.key");
}

absl::Status MakeNodeCertificate(const std::string& ca_directory, const std::string& prefix,
                                 const std::string& common_name, const std::vector<std::string>& hosts) {
  const std::string log = ca_directory + "/openssl.log";
  std::vector<std::string> names = {"DNS:localhost"};
  for (const std::string& host : hosts) names.push_back("IP:" + host);
  const std::string extensions_path = prefix + ".ext";
  {
    std::ofstream extensions(extensions_path);
    extensions << "subjectAltName=" << absl::StrJoin(names, ",") << "\n"
               << "basicConstraints=CA:FALSE\n"
               << "keyUsage=digitalSignature,keyEncipherment\n"
               << "extendedKeyUsage=serverAuth,clientAuth\n";
    if (!extensions) return absl::InternalError(absl::StrCat("cannot write ", extensions_path));
  }
  std::vector<std::string> request = {"req"};
  for (std::string& word : NewKeyArguments(prefix + ".key")) request.push_back(word);
  request.insert(request.end(), {"-out", prefix + ".csr", "-subj", "/O=charybdis/CN=" + common_name});
  if (absl::Status made = RunOpenssl(request, log); !made.ok()) return made;
  if (absl::Status hidden = OwnerOnly(prefix + ".key"); !hidden.ok()) return hidden;
  const std::vector<std::string> sign = {"x509", "-req", "-in", prefix + ".csr", "-CA", ca_directory + "/ca.pem",
                                         "-CAkey", ca_directory + "/ca.key", "-CAcreateserial", "-out",
                                         prefix + ".pem", "-days", kValidDays, "-extfile", extensions_path};
  if (absl::Status signed_ = RunOpenssl(sign, log); !signed_.ok()) return signed_;
  std::remove((prefix + ".csr").c_str());
  std::remove(extensions_path.c_str());
  return absl::OkStatus();
}

}  // namespace charybdis::node
