#pragma once

#include <netinet/in.h>

#include <string>

namespace charybdis::node {

// "host:port" (an IPv4 address, or localhost) as a socket address; false
// if it is not one.
bool ParseIpv4HostPort(const std::string& host_port, sockaddr_in& out);

}  // namespace charybdis::node
