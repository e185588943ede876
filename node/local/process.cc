#include "node/local/process.h"

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
