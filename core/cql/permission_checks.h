#pragma once

// What each CQL statement needs of its role's permissions (docs/security.md),
// as Cassandra's CassandraAuthorizer asks: SELECT to read a table, MODIFY
// to write it (and SELECT too for a conditional write, which reads),
// CREATE on the parent to create, ALTER and DROP on the thing itself.

#include <optional>
#include <string>
#include <vector>

#include "core/auth/permissions.h"
#include "core/cql/prepared.h"
#include "proto/client.pb.h"

namespace charybdis::cql {

// Nothing for USE, the system tables drivers read, and role statements
// (core/cql/role_statements.h checks those itself).
std::vector<auth::Needed> NeededFor(const Prepared& prepared);

// What a CREATE KEYSPACE or CREATE TABLE creates, as a resource (its
// creator is granted every permission on it); nothing for other statements.
std::optional<std::string> CreatedResource(const Prepared& prepared);

// What a DROP KEYSPACE or DROP TABLE drops, as a resource (every grant on
// it and under it is revoked); nothing for other statements.
std::optional<std::string> DroppedResource(const Prepared& prepared);

// A schema change of the gRPC client API as the CQL statement it carries;
// nullopt when the statement does not parse.
std::optional<Prepared> PreparedOf(const SchemaChangeOp& change);

// The storage tables ("keyspace.table", or a node config's table) a
// request of the gRPC client API reads or writes.
std::vector<std::string> TablesOf(const ClientRequest& request);

// What a request of the gRPC client API needs, as the CQL statement that
// does the same would: SELECT to read a table, MODIFY to write it (both for
// a conditional write), and for a schema change what the statement needs.
// A table of a node's config belongs to no keyspace: it needs the
// permission on ALL KEYSPACES. Nothing (nullopt) when only a superuser may
// send it: topology changes, cleanup, repair and compaction, which act on
// the whole node.
std::optional<std::vector<auth::Needed>> NeededForRequest(const ClientRequest& request);

}  // namespace charybdis::cql
