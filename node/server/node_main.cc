// charybdis-node: one real node (see docs/node.md).
//
//   charybdis-node --config=FILE
//
// Exit status: 0 after a graceful shutdown (SIGTERM or SIGINT), 2 for a bad
// config or an environment it cannot start in (port in use, a data
// directory of another node or in use).

#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "node/server/config.h"
#include "node/server/log.h"
#include "node/server/mutex_mode.h"
#include "node/server/node.h"

namespace {

constexpr char kUsage[] = "usage: charybdis-node --config=FILE\n";

}  // namespace

int main(int argc, char** argv) {
  using charybdis::node::Log;
  charybdis::node::SkipMutexDeadlockDetection();
  // OpenSSL writes TLS sockets with write(2): a peer gone must be an
  // error on that socket, not the end of the process.
  signal(SIGPIPE, SIG_IGN);
  std::string config_path;
  for (int i = 1; i < argc; i++) {
    const std::string argument = argv[i];
    if (argument.rfind("--config=", 0) == 0) {
      config_path = argument.substr(strlen("--config="));
    } else if (argument == "--help" || argument == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "charybdis-node: unknown argument " << argument << "\n" << kUsage;
      return 2;
    }
  }
  if (config_path.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  auto config = charybdis::node::LoadConfig(config_path);
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 2;
  }
  // Signals are taken synchronously below, not by a handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const uint32_t id = config->node.id;
  auto node = charybdis::node::Node::Start(std::move(*config));
  if (!node.ok()) {
    std::cerr << config_path << ": " << node.status().message() << "\n";
    return 2;
  }
  const auto& loaded = (*node)->config();
  Log("info", "started",
      {{"node", absl::StrCat(id)},
       {"shards", absl::StrCat(loaded.node.shards)},
       {"internode", loaded.internode_address},
       {"client", loaded.client_address},
       {"metrics", loaded.metrics_address},
       {"data", loaded.file.data_directory()}});
  int received = 0;
  sigwait(&signals, &received);
  Log("info", "stopping", {{"node", absl::StrCat(id)}, {"signal", strsignal(received)}});
  (*node)->Shutdown();
  node->reset();
  Log("info", "stopped", {{"node", absl::StrCat(id)}});
  return 0;
}
