#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cql/schema.h"
#include "core/cluster/node_config.h"
#include "core/cql/auth_service.h"
#include "node/tls/tls_context.h"
#include "proto/node.pb.h"

namespace charybdis::node {

// A node's config file, checked, and what it means for core/.
struct LoadedConfig {
  NodeConfigFile file;
  NodeConfig node;  // with the ring and the tables
  std::string internode_address;
  std::string client_address;
  std::string metrics_address;  // empty: no /metrics page
  std::map<NodeId, std::string> peer_internode_addresses;
  std::string cql_address;  // empty: no CQL server
  cql::AuthConfig cql_auth;  // with the superuser's password read from its file
  // TLS (docs/security.md): the files, absolute, when anything is on.
  std::optional<TlsFiles> tls_files;
  Tls::Clients tls_clients = Tls::OFF;
  bool tls_internode = false;
};

// Whether the CQL port listens beyond loopback and asks for no password:
// anyone who reaches it may read, write and drop every table. The node
// warns at start and in its status (docs/security.md).
bool CqlOpenToEveryone(const LoadedConfig& config);
// What a config leaves exposed on a port that listens beyond loopback,
// each one a warning the node logs at start (the table at the top of
// docs/security.md): `event` names it in the log.
struct Exposure {
  std::string event;
  std::string address;
  std::string why;
  std::string fix;
};
std::vector<Exposure> ExposuresOf(const LoadedConfig& config);

// Parses and checks a config file. Every problem is reported, one per line,
// as "FILE:LINE:COLUMN: field.path: what is wrong" (InvalidArgument).
absl::StatusOr<LoadedConfig> LoadConfig(const std::string& path);
absl::StatusOr<LoadedConfig> ParseConfig(const std::string& path, const std::string& text);

}  // namespace charybdis::node
