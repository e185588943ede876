#pragma once

// One client connection's side of the native protocol: OPTIONS, STARTUP,
// REGISTER, QUERY, PREPARE, EXECUTE and BATCH in, SUPPORTED, READY,
// RESULT and ERROR out. Pure: the caller frames the byte stream, runs the
// requests (Backend) and writes the frames out.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/auth/permissions.h"
#include "core/cql/compression.h"
#include "core/cql/event.h"
#include "core/env/buggify.h"
#include "core/env/time.h"
#include "core/cql/execute.h"
#include "core/cql/prepared.h"
#include "core/cql/wire.h"
#include "core/env/address.h"
#include "core/env/probe.h"
#include "core/data/token.h"

namespace charybdis::cql {

class AuthService;
struct RoleRecord;

// The shard of a node a request of ours goes to: the one that owns its
// partition, shard 0 for a schema change (its schema agent's), or where a
// scan starts.
inline ShardId ShardFor(const ClientRequest& request, uint32_t shards) {
  if (request.has_schema_change()) return 0;
  if (request.has_read()) return ShardOf(TokenOf(request.read().partition_key()), shards);
  if (request.has_cas()) return ShardOf(TokenOf(request.cas().statement(0).write().partition_key()), shards);
  if (request.has_batch()) return ShardOf(TokenOf(request.batch().write(0).partition_key()), shards);
  // A scan spans every shard: the one its range starts on coordinates it.
  if (request.has_scan()) return ShardOf(request.scan().start_token(), shards);
  return ShardOf(TokenOf(request.write().partition_key()), shards);
}

// What a connection needs of the node it reaches.
class Backend {
 public:
  virtual ~Backend() = default;
  // Runs one request of ours; `done` may come on any thread, once.
  virtual void Execute(ClientRequest request, std::function<void(ClientResponse)> done) = 0;
  virtual const ClusterView& Cluster() = 0;
  // The node's schema now (it changes with DDL, on any node).
  virtual std::shared_ptr<const Schema> CurrentSchema() = 0;
  // Where the connection marks its rare paths (core/env/probe.h).
  virtual Probes* probes() { return NoProbes::Instance(); }
  // Runs `task` later on the thread of this backend's connections (never
  // inside the call): answers that change a connection's state (a login)
  // or the node's authentication come back through it.
  virtual void Post(std::function<void()> task) = 0;
  // Post, as a function that may outlive this backend: what a request's
  // answer (on a shard's thread) hands back with it. A real node's drops
  // the task once its CQL server is gone (node/server/cql_server.cc).
  virtual std::function<void(std::function<void()>)> Poster() {
    return [this](std::function<void()> task) { Post(std::move(task)); };
  }
  // A monotonic clock (the login throttle's).
  virtual Nanos Now() = 0;
  // What now(), uuid() and currentTimestamp() read: the node's clock and
  // random bits (a simulation's seeded).
  virtual const FunctionSources& functions() = 0;
  // The node's authentication (core/cql/auth_service.h); null: none.
  virtual AuthService* auth() { return nullptr; }
  // Rare paths a simulation may take (core/env/buggify.h); never by default.
  virtual Buggify& buggify() {
    static NeverBuggify never;
    return never;
  }
};

// Runs `plan` through `backend`, and sends its answer on `stream`.
void RunPlan(Backend& backend, const std::function<void(std::string)>& send, int16_t stream, Plan plan);

// A node's prepared statements, by id, shared by its connections. Ids
// depend only on the keyspace and the text, so that a client re-preparing
// after a restart gets the id it knew. Not thread-safe.
class PreparedStatements {
 public:
  static constexpr size_t kMaxStatements = 10000;
  std::string Add(std::string_view keyspace, std::shared_ptr<const Prepared> prepared);
  // Null, too, when the statement's table was dropped or altered since.
  std::shared_ptr<const Prepared> Find(const std::string& id, const Schema& schema) const;
  // Whether `id` was prepared here, whatever the schema did since.
  bool Knows(const std::string& id) const { return by_id_.count(id) > 0; }

 private:
  std::map<std::string, std::shared_ptr<const Prepared>> by_id_;
};

// Where a connection lives, for ScyllaDB's shard-awareness extension
// (SUPPORTED tells the driver; docs/cql.md).
struct ShardInfo {
  uint32_t shard = 0;
  uint32_t shards = 1;
  uint32_t ignore_msb = 0;
  uint16_t shard_aware_port = 0;  // 0: none
};

// The mask ScyllaDB's drivers test prepared metadata flags against to
// tell a conditional statement (SCYLLA_LWT_ADD_METADATA_MARK).
constexpr uint32_t kLwtMetadataMark = 0x80000000u;

class Connection {
 public:
  // How long a connection trusts the permissions it read (Cassandra's
  // permissions_validity default): a REVOKE counts within this.
  static constexpr Nanos kPermissionsValidity = 2 * kSecond;
  // Writes one whole frame; may be called on any thread (answers of
  // requests come on the thread that finished them).
  using Send = std::function<void(std::string frame)>;

  // `peer`: the client's address, whose failed logins are slowed down.
  Connection(PreparedStatements& prepared, Backend& backend, ShardInfo shard, std::string peer, Send send)
      : prepared_(prepared), backend_(backend), shard_(shard), peer_(std::move(peer)), send_(std::move(send)) {}

  // One frame from the client (its body at most kMaxBodyBytes). Returns
  // false after a protocol error: the stream can no longer be trusted, so
  // the caller closes the connection once the error is out.
  bool OnFrame(const FrameHeader& header, std::string_view body);

  // The protocol error for a frame whose body exceeds kMaxBodyBytes.
  void RejectOversized(const FrameHeader& header);

  // An EVENT for a connection that REGISTERed its type (none otherwise).
  void Push(const Event& event);

 private:
  void Reply(int16_t stream, const Response& response);
  bool ProtocolError(int16_t stream, std::string message);
  void Run(int16_t stream, Plan plan);

  void Options(int16_t stream);
  bool Startup(int16_t stream, std::string_view body);
  bool Register(int16_t stream, std::string_view body);
  bool Query(int16_t stream, std::string_view body);
  bool PrepareMessage(int16_t stream, std::string_view body);
  bool Execute(int16_t stream, std::string_view body);
  bool BatchMessage(int16_t stream, std::string_view body);
  // Login (core/cql/connection_auth.cc).
  bool AuthResponse(int16_t stream, std::string_view body);
  // A CREATE, ALTER or DROP ROLE or LIST ROLES, for the logged-in role.
  void RunRole(int16_t stream, std::shared_ptr<const Prepared> prepared);
  // Runs a statement's plan; a CREATE KEYSPACE or CREATE TABLE that
  // created what it names then grants its creator every permission that
  // applies to it, and a DROP that dropped it revokes every grant on it
  // and under it, before the answer goes (with auth on).
  void RunWithGrantsFollowing(int16_t stream, const Prepared& prepared, Plan plan);
  // Runs a schema change's plan; once it changed the schema, `after` runs
  // on the connection's thread and the answer goes when it calls back.
  void RunSchemaChange(int16_t stream, Plan plan, std::function<void(std::function<void()>)> after);
  // Drops the cached permissions, and any read of them in flight.
  void ForgetPermissions();
  // A prepared statement, unless it names system_auth or its role lacks
  // a permission it needs.
  void RunPrepared(int16_t stream, std::shared_ptr<const Prepared> prepared, QueryOptions options,
                   std::shared_ptr<const Schema> schema);
  // Runs `then` if the logged-in role has every permission `needed`
  // (always with auth off); answers Unauthorized otherwise. The role's
  // permissions are read at most every kPermissionsValidity, as
  // Cassandra's permissions_validity (core/cql/connection_auth.cc).
  void Authorize(int16_t stream, std::vector<auth::Needed> needed, std::function<void()> then);
  void CheckPermissionsAgainst(const auth::RolePermissions& permissions, int16_t stream,
                               const std::vector<auth::Needed>& needed, const std::function<void()>& then);

  PreparedStatements& prepared_;
  Backend& backend_;
  const ShardInfo shard_;
  const std::string peer_;
  Send send_;  // compresses what it sends once STARTUP asked for it
  Compression compression_ = Compression::kNone;
  bool started_ = false;
  // With auth off, set at STARTUP; with auth on, by a login.
  bool authenticated_ = false;
  bool login_running_ = false;  // an AUTH_RESPONSE is being checked
  std::string role_;  // the logged-in role (auth on)
  // What the logged-in role may do, as last read, and when.
  std::optional<auth::RolePermissions> permissions_;
  Nanos permissions_read_at_ = 0;
  uint64_t permissions_generation_ = 0;  // ForgetPermissions's count
  // Answers that come back through Backend::Post test it: the connection
  // may be gone by then.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  bool lwt_mark_ = false;  // the client asked for SCYLLA_LWT_ADD_METADATA_MARK
  std::string keyspace_;
  // REGISTERed event types (node/server/cql_server.cc pushes the failure
  // detector's news and schema changes; docs/cql.md).
  std::set<std::string> events_;
};

// A QUERY's or EXECUTE's <query_parameters>; false when malformed.
bool ReadQueryOptions(Reader& in, QueryOptions& options);

}  // namespace charybdis::cql
