#pragma once

#include <netinet/in.h>

#include <string>

#include "absl/status/statusor.h"

namespace charybdis::node {

// "host:port" (an IPv4 address, or localhost) as a socket address; false
// if it is not one.
bool ParseIpv4HostPort(const std::string& host_port, sockaddr_in& out);

// "host:port" with any host name the resolver knows (IPv4), looked up now.
absl::StatusOr<sockaddr_in> ResolveIpv4HostPort(const std::string& host_port);

// A non-blocking TCP socket listening on `address`, or -1 with errno set.
// SO_REUSEADDR lets a restarted server rebind its port at once; there is
// no SO_REUSEPORT, so a second process on the same port fails.
int ListenTcp(const sockaddr_in& address, int backlog);

}  // namespace charybdis::node
