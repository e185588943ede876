#pragma once

namespace charybdis::node {

// The metadata a call of the gRPC client API carries its role and password
// in when the node asks for passwords (docs/security.md, "The gRPC client
// API"); binary keys, so any bytes go.
constexpr char kRoleMetadata[] = "role-bin";
constexpr char kPasswordMetadata[] = "password-bin";

}  // namespace charybdis::node
