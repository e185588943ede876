#include "node/socket_address.h"

#include <arpa/inet.h>

#include <cstdint>

#include "absl/strings/numbers.h"

namespace charybdis::node {

bool ParseIpv4HostPort(const std::string& host_port, sockaddr_in& out) {
  const size_t colon = host_port.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port) || port > 65535) return false;
  std::string host = host_port.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  out = {};
  out.sin_family = AF_INET;
  out.sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, host.c_str(), &out.sin_addr) == 1;
}

}  // namespace charybdis::node
