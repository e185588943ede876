#include "node/local/process.h"

#include "absl/strings/str_cat.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace charybdis::node {

namespace {

// Pids StartDetached started, for the signal handler: a fixed table of
// atomics, since a handler may touch nothing else.
constexpr size_t kMaxTracked = 64;
std::atomic<int> tracked_pids[kMaxTracked];

void Track(int pid) {
  for (std::atomic<int>& slot : tracked_pids) {
    int empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void Untrack(int pid) {
  for (std::atomic<int>& slot : tracked_pids) {
    int expected = pid;
    slot.compare_exchange_strong(expected, 0);
  }
}

void KillTrackedAndExit(int signal_number) {
  for (std::atomic<int>& slot : tracked_pids) {
    if (const int pid = slot.load(); pid > 0) kill(pid, SIGKILL);
  }
  _exit(128 + signal_number);
}

}  // namespace

void KillChildrenOnInterrupt() {
  struct sigaction action {};
  action.sa_handler = KillTrackedAndExit;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

absl::StatusOr<std::vector<int>> FreePorts(size_t count) {
  std::vector<int> sockets;
  std::vector<int> ports;
  for (size_t i = 0; i < count; i++) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      for (int open : sockets) close(open);
      if (fd >= 0) close(fd);
      return absl::UnavailableError("cannot find a free loopback port");
    }
    sockets.push_back(fd);
    ports.push_back(ntohs(address.sin_port));
  }
  for (int fd : sockets) close(fd);
  return ports;
}

bool PortsFree(const std::string& ip, const std::vector<int>& ports) {
  std::vector<int> sockets;
  bool free = true;
  for (int port : ports) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    free = fd >= 0 && inet_pton(AF_INET, ip.c_str(), &address.sin_addr) == 1 &&
           bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    if (fd >= 0) sockets.push_back(fd);
    if (!free) break;
  }
  for (int fd : sockets) close(fd);
  return free;
}

absl::StatusOr<int> FreeLoopbackBlock(size_t nodes, const std::vector<int>& ports) {
  if (nodes == 0 || nodes > 254) return absl::InvalidArgumentError("a loopback block holds 1 to 254 nodes");
  if (!PortsFree("127.0.255.254", {0})) return absl::UnavailableError("this machine cannot bind 127.0.x.y");
  constexpr int kBlocks = 254;  // 127.0.1.x to 127.0.254.x; 127.0.0.x is the port-per-node mode's
  const int first = static_cast<int>(getpid() % kBlocks);
  for (int step = 0; step < kBlocks; step++) {
    const int block = 1 + (first + step) % kBlocks;
    bool free = true;
    for (size_t node = 1; node <= nodes && free; node++) free = PortsFree(absl::StrCat("127.0.", block, ".", node), ports);
    if (free) return block;
  }
  return absl::UnavailableError("no block of loopback addresses has the standard ports free");
}

absl::StatusOr<int> StartDetached(const std::string& binary, const std::vector<std::string>& arguments,
                                  const std::string& log_path) {
  // Everything the child needs is made before fork: other threads may
  // hold the allocator's lock at that moment.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    setsid();
    const int out = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    if (in >= 0) dup2(in, STDIN_FILENO);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  Track(pid);
  return pid;
}

bool Alive(int pid) {
  if (pid <= 0) return false;
  int status = 0;
  const pid_t reaped = waitpid(pid, &status, WNOHANG);
  if (reaped == pid) {  // our child, and it exited (its pid may now be reused)
    Untrack(pid);
    return false;
  }
  return kill(pid, 0) == 0;
}

std::vector<int> Terminate(const std::vector<int>& pids, int timeout_ms) {
  for (int pid : pids) {
    if (!Alive(pid)) continue;
    kill(pid, SIGCONT);  // a stopped process could not take the signal
    kill(pid, SIGTERM);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<int> killed;
  for (int pid : pids) {
    while (Alive(pid) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (Alive(pid)) killed.push_back(pid);
    KillNow(pid);
  }
  return killed;
}

void KillNow(int pid) {
  if (Alive(pid)) kill(pid, SIGKILL);
  while (Alive(pid)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Tail(const std::string& path, size_t lines) {
  const std::string text = ReadFile(path);
  size_t at = text.size();
  for (size_t seen = 0; at > 0 && seen <= lines; at--) {
    if (text[at - 1] == '\n') seen++;
  }
  return text.substr(at);
}

}  // namespace charybdis::node
