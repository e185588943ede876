#include "node/server/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <cstdint>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace charybdis::node {

namespace {

bool SplitHostPort(const std::string& host_port, std::string& host, uint16_t& port) {
  const size_t colon = host_port.rfind(':');
  uint32_t number = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &number) || number > 65535) {
    return false;
  }
  host = host_port.substr(0, colon);
  port = static_cast<uint16_t>(number);
  return true;
}

}  // namespace

bool ParseIpv4HostPort(const std::string& host_port, sockaddr_in& out) {
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(host_port, host, port)) return false;
  if (host == "localhost") host = "127.0.0.1";
  out = {};
  out.sin_family = AF_INET;
  out.sin_port = htons(port);
  return inet_pton(AF_INET, host.c_str(), &out.sin_addr) == 1;
}

absl::StatusOr<sockaddr_in> ResolveIpv4HostPort(const std::string& host_port) {
  sockaddr_in address{};
  if (ParseIpv4HostPort(host_port, address)) return address;
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(host_port, host, port)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", host_port, "\" is not host:port"));
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int error = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (error != 0 || found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot resolve ", host, ": ", gai_strerror(error)));
  }
  std::memcpy(&address, found->ai_addr, sizeof(address));
  freeaddrinfo(found);
  address.sin_port = htons(port);
  return address;
}

int ListenTcp(const sockaddr_in& address, int backlog) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 || listen(fd, backlog) != 0) {
    const int error = errno;  // close must not hide why
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

}  // namespace charybdis::node
