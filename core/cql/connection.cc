#include "core/cql/connection.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "core/cql/consistency_code.h"
#include "core/cql/permission_checks.h"
#include "core/cql/system_auth_guard.h"
#include "core/cql/auth_service.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

enum QueryFlag : uint8_t {
  kValues = 0x01,
  kSkipMetadata = 0x02,
  kPageSize = 0x04,
  kPagingState = 0x08,
  kSerialConsistency = 0x10,
  kDefaultTimestamp = 0x20,
  kNamesForValues = 0x40,
};

enum FrameFlag : uint8_t { kCustomPayload = 0x04 };

constexpr int32_t kPreparedKind = 4;

const char* OpcodeName(uint8_t opcode) {
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kQuery: return "QUERY";
    case Opcode::kPrepare: return "PREPARE";
    case Opcode::kExecute: return "EXECUTE";
    case Opcode::kBatch: return "BATCH";
    case Opcode::kRegister: return "REGISTER";
    case Opcode::kAuthResponse: return "AUTH_RESPONSE";
    default: return "a message";
  }
}

// The <metadata> of a prepared statement's bind markers, with the
// markers that give the partition key, for token-aware routing.
// `lwt_mark`: flag a conditional statement with kLwtMetadataMark.
void WriteBindMetadata(Writer& out, const Prepared& prepared, bool lwt_mark) {
  const bool global = OneTable(prepared.markers);
  out.Int(static_cast<int32_t>((global ? 1u : 0u) | (lwt_mark && prepared.conditional ? kLwtMetadataMark : 0u)));
  out.Int(static_cast<int32_t>(prepared.markers.size()));
  out.Int(static_cast<int32_t>(prepared.partition_key_markers.size()));
  for (int marker : prepared.partition_key_markers) {
    CHARYBDIS_ASSERT(marker >= 0);
    CHARYBDIS_ASSERT(static_cast<size_t>(marker) < prepared.markers.size());
  }
  for (int marker : prepared.partition_key_markers) out.Short(static_cast<uint16_t>(marker));
  WriteColumnSpecs(out, prepared.markers, global);
}

std::string ResponseFrame(int16_t stream, const Response& response) {
  FrameHeader header;
  header.response = true;
  header.stream = stream;
  header.opcode = static_cast<uint8_t>(response.opcode);
  return EncodeFrame(header, response.body);
}

}  // namespace

std::string PreparedStatements::Add(std::string_view keyspace, std::shared_ptr<const Prepared> prepared) {
  CHARYBDIS_ASSERT(prepared != nullptr);
  std::string id = NameUuid(absl::StrCat(std::string(keyspace), "\n", prepared->query));
  if (by_id_.size() >= kMaxStatements && !by_id_.count(id)) by_id_.erase(by_id_.begin());
  by_id_[id] = std::move(prepared);
  CHARYBDIS_ASSERT(by_id_.size() <= kMaxStatements);
  return id;
}

std::shared_ptr<const Prepared> PreparedStatements::Find(const std::string& id, const Schema& schema) const {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  CHARYBDIS_ASSERT(it->second != nullptr);  // Add keeps only statements
  const Prepared& prepared = *it->second;
  if (!prepared.table || prepared.system_table) return it->second;
  // Prepared against a table that was dropped (and perhaps created again)
  // or altered since: the driver must prepare again, and learn the new
  // columns.
  const Table* now = schema.FindTable(prepared.table->keyspace, prepared.table->name);
  if (now == nullptr || now->id != prepared.table->id || now->columns.size() != prepared.table->columns.size()) {
    return nullptr;
  }
  for (size_t i = 0; i < now->columns.size(); i++) {
    if (now->columns[i].name != prepared.table->columns[i].name) return nullptr;
  }
  return it->second;
}

bool ReadQueryOptions(Reader& in, QueryOptions& options) {
  std::optional<ConsistencyLevel> consistency = FromCqlConsistency(in.UnsignedShort());
  const uint8_t flags = in.Byte();
  if (flags & kValues) {
    const uint16_t count = in.UnsignedShort();
    for (uint16_t i = 0; i < count && in.ok(); i++) {
      if (flags & kNamesForValues) options.value_names.push_back(in.String());
      options.values.push_back(in.Bytes());
    }
  }
  options.skip_metadata = (flags & kSkipMetadata) != 0;
  if (flags & kPageSize) options.page_size = in.Int();
  if (flags & kPagingState) options.paging_state = in.Bytes().bytes;
  std::optional<ConsistencyLevel> serial = CL_SERIAL;
  if (flags & kSerialConsistency) serial = FromCqlConsistency(in.UnsignedShort());
  if (flags & kDefaultTimestamp) options.timestamp_us = in.Long();
  if (!in.ok() || !consistency || !serial) return false;
  options.consistency = *consistency;
  options.serial_consistency = *serial;
  return true;
}

bool Connection::OnFrame(const FrameHeader& header, std::string_view body) {
  const int16_t stream = header.stream;
  if (header.version != kProtocolVersion) {
    return ProtocolError(stream, absl::StrCat("Invalid or unsupported protocol version (", header.version,
                                              "); supported versions are (4/v4)"));
  }
  if (header.response) return ProtocolError(stream, "a client sent a response frame");
  if (header.flags & kCustomPayload) return ProtocolError(stream, "custom payloads are not supported");
  std::string decompressed;
  if (header.flags & kCompressedFlag) {
    if (compression_ == Compression::kNone) return ProtocolError(stream, "compression was not negotiated");
    absl::StatusOr<std::string> body_read = Decompress(compression_, body, kMaxBodyBytes);
    if (!body_read.ok()) return ProtocolError(stream, std::string(body_read.status().message()));
    decompressed = *std::move(body_read);
    body = decompressed;
  }
  const auto opcode = static_cast<Opcode>(header.opcode);
  if (opcode == Opcode::kOptions) {
    Options(stream);
    return true;
  }
  if (opcode == Opcode::kStartup) return Startup(stream, body);
  if (!started_) {
    return ProtocolError(stream, absl::StrCat("Unexpected message ", OpcodeName(header.opcode), ", expecting STARTUP or OPTIONS"));
  }
  if (!authenticated_) {
    if (opcode == Opcode::kAuthResponse) return AuthResponse(stream, body);
    // Nothing runs before a login: the driver sent a request too soon, or
    // does not speak PasswordAuthenticator.
    return ProtocolError(stream, absl::StrCat("Unexpected message ", OpcodeName(header.opcode), ", expecting AUTH_RESPONSE"));
  }
  switch (opcode) {
    case Opcode::kRegister: return Register(stream, body);
    case Opcode::kQuery: return Query(stream, body);
    case Opcode::kPrepare: return PrepareMessage(stream, body);
    case Opcode::kExecute: return Execute(stream, body);
    case Opcode::kBatch: return BatchMessage(stream, body);
    default: return ProtocolError(stream, absl::StrCat("unknown or unexpected opcode 0x", absl::Hex(header.opcode)));
  }
}

void Connection::RejectOversized(const FrameHeader& header) {
  ProtocolError(header.stream, absl::StrCat("Request is too big: length ", header.body_bytes, " exceeds maximum allowed length ",
                                            kMaxBodyBytes));
}

void Connection::Push(const Event& event) {
  if (!events_.count(event.type)) return;
  Writer out;
  out.String(event.type);
  out.Raw(event.body);
  // Events go out on stream -1, which no request uses.
  Reply(-1, {Opcode::kEvent, out.Take()});
}

void Connection::Reply(int16_t stream, const Response& response) { send_(ResponseFrame(stream, response)); }

bool Connection::ProtocolError(int16_t stream, std::string message) {
  Reply(stream, ErrorResponse({ErrorCode::kProtocol, std::move(message), ""}));
  return false;
}

void Connection::Options(int16_t stream) {
  std::map<std::string, std::vector<std::string>> options;
  options["CQL_VERSION"] = {"3.3.1"};
  options["COMPRESSION"] = {std::begin(kCompressionNames), std::end(kCompressionNames)};
  options["PROTOCOL_VERSIONS"] = {"4/v4"};
  // ScyllaDB's extensions: which shard this connection is on and how
  // partitions map to shards, so that a driver can reach each shard.
  options["SCYLLA_SHARD"] = {absl::StrCat(shard_.shard)};
  options["SCYLLA_NR_SHARDS"] = {absl::StrCat(shard_.shards)};
  options["SCYLLA_PARTITIONER"] = {"org.apache.cassandra.dht.Murmur3Partitioner"};
  options["SCYLLA_SHARDING_ALGORITHM"] = {"biased-token-round-robin"};
  options["SCYLLA_SHARDING_IGNORE_MSB"] = {absl::StrCat(shard_.ignore_msb)};
  if (shard_.shard_aware_port != 0) options["SCYLLA_SHARD_AWARE_PORT"] = {absl::StrCat(shard_.shard_aware_port)};
  options["SCYLLA_LWT_ADD_METADATA_MARK"] = {absl::StrCat("LWT_OPTIMIZATION_META_BIT_MASK=", kLwtMetadataMark)};
  Writer out;
  out.StringMultimap(options);
  Reply(stream, {Opcode::kSupported, out.Take()});
}

bool Connection::Startup(int16_t stream, std::string_view body) {
  Reader in(body);
  const std::map<std::string, std::string> options = in.StringMap();
  if (!in.ok()) return ProtocolError(stream, "malformed STARTUP body");
  if (!options.count("CQL_VERSION")) return ProtocolError(stream, "STARTUP lacks the mandatory option CQL_VERSION");
  auto named = options.find("COMPRESSION");
  const std::optional<Compression> compression = CompressionNamed(named == options.end() ? "" : named->second);
  if (!compression) return ProtocolError(stream, absl::StrCat("Unknown compression algorithm: ", named->second));
  if (started_ && *compression != compression_) return ProtocolError(stream, "a second STARTUP cannot change the compression");
  if (!started_ && *compression != Compression::kNone) {
    // Every frame from here on, the answer to this STARTUP included (the
    // spec allows it, and drivers expect it), goes compressed, whichever
    // thread sends it.
    compression_ = *compression;
    send_ = [send = std::move(send_), compression = *compression](std::string frame) {
      send(CompressFrame(compression, std::move(frame)));
    };
  }
  lwt_mark_ = options.count("SCYLLA_LWT_ADD_METADATA_MARK") > 0;
  started_ = true;
  const AuthService* auth = backend_.auth();
  if (authenticated_ || auth == nullptr || !auth->required()) {
    authenticated_ = true;
    Reply(stream, {Opcode::kReady, ""});
    return true;
  }
  Writer out;
  out.String(kPasswordAuthenticator);
  Reply(stream, {Opcode::kAuthenticate, out.Take()});
  return true;
}

bool Connection::Register(int16_t stream, std::string_view body) {
  Reader in(body);
  const std::vector<std::string> events = in.StringList();
  if (!in.ok()) return ProtocolError(stream, "malformed REGISTER body");
  for (const std::string& event : events) {
    if (event != "TOPOLOGY_CHANGE" && event != "STATUS_CHANGE" && event != "SCHEMA_CHANGE") {
      return ProtocolError(stream, absl::StrCat("Invalid value '", event, "' for event type"));
    }
    events_.insert(event);
  }
  Reply(stream, {Opcode::kReady, ""});
  return true;
}

void RunPlan(Backend& backend, const std::function<void(std::string)>& send, int16_t stream, Plan plan) {
  if (plan.response) return send(ResponseFrame(stream, *plan.response));
  if (plan.requests.empty()) return send(ResponseFrame(stream, plan.finish({})));
  // The answers may come on several threads: each fills its own slot and
  // the last one finishes.
  struct Gathering {
    std::vector<ClientResponse> responses;
    std::atomic<size_t> remaining;
    std::function<Response(const std::vector<ClientResponse>&)> finish;
    std::function<void(std::string)> send;
  };
  auto gathering = std::make_shared<Gathering>();
  gathering->responses.resize(plan.requests.size());
  gathering->remaining = plan.requests.size();
  gathering->finish = std::move(plan.finish);
  gathering->send = send;
  CHARYBDIS_ASSERT(gathering->finish != nullptr);  // a plan with requests finishes them
  for (size_t i = 0; i < plan.requests.size(); i++) {
    backend.Execute(std::move(plan.requests[i]), [gathering, i, stream](ClientResponse response) {
      CHARYBDIS_ASSERT(i < gathering->responses.size());
      gathering->responses[i] = std::move(response);
      if (gathering->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      CHARYBDIS_ASSERT(gathering->remaining.load(std::memory_order_acquire) == 0);  // each answer comes once
      gathering->send(ResponseFrame(stream, gathering->finish(gathering->responses)));
    });
  }
}

void Connection::Run(int16_t stream, Plan plan) {
  if (plan.use_keyspace) keyspace_ = *plan.use_keyspace;
  RunPlan(backend_, send_, stream, std::move(plan));
}

void Connection::RunPrepared(int16_t stream, std::shared_ptr<const Prepared> prepared, QueryOptions options,
                             std::shared_ptr<const Schema> schema) {
  if (IsRoleStatement(prepared->parsed.statement)) return RunRole(stream, std::move(prepared));
  if (std::optional<Error> refused = SystemAuthRefusal(*prepared)) return Reply(stream, ErrorResponse(*refused));
  std::vector<auth::Needed> needed = NeededFor(*prepared);
  Authorize(stream, std::move(needed), [this, stream, prepared, options, schema] {
    RunWithGrantsFollowing(stream, *prepared, PlanExecution(prepared, options, *schema, backend_.Cluster()));
  });
}

bool Connection::Query(int16_t stream, std::string_view body) {
  Reader in(body);
  const std::string query = in.LongString();
  QueryOptions options;
  if (!ReadQueryOptions(in, options)) return ProtocolError(stream, "malformed QUERY body");
  options.probes = backend_.probes();
  options.functions = &backend_.functions();
  const std::shared_ptr<const Schema> schema = backend_.CurrentSchema();
  PrepareResult prepared = Prepare(*schema, keyspace_, query);
  if (!prepared.prepared) {
    Reply(stream, ErrorResponse(prepared.error));
    return true;
  }
  RunPrepared(stream, std::move(prepared.prepared), std::move(options), schema);
  return true;
}

bool Connection::PrepareMessage(int16_t stream, std::string_view body) {
  Reader in(body);
  const std::string query = in.LongString();
  if (!in.ok()) return ProtocolError(stream, "malformed PREPARE body");
  const std::shared_ptr<const Schema> schema = backend_.CurrentSchema();
  PrepareResult prepared = Prepare(*schema, keyspace_, query);
  if (!prepared.prepared) {
    Reply(stream, ErrorResponse(prepared.error));
    return true;
  }
  Writer out;
  out.Int(kPreparedKind);
  out.ShortBytes(prepared_.Add(keyspace_, prepared.prepared));
  WriteBindMetadata(out, *prepared.prepared, lwt_mark_);
  const std::vector<ResultColumn>& columns = prepared.prepared->result_columns;
  WriteResultMetadata(out, columns, std::nullopt, columns.empty());
  Reply(stream, {Opcode::kResult, out.Take()});
  return true;
}

bool Connection::Execute(int16_t stream, std::string_view body) {
  Reader in(body);
  const std::string id = in.ShortBytes();
  QueryOptions options;
  if (!ReadQueryOptions(in, options)) return ProtocolError(stream, "malformed EXECUTE body");
  options.probes = backend_.probes();
  options.functions = &backend_.functions();
  const std::shared_ptr<const Schema> schema = backend_.CurrentSchema();
  std::shared_ptr<const Prepared> prepared = prepared_.Find(id, *schema);
  if (prepared == nullptr) {
    // Never prepared here (another node's id, or a restart lost it), or its
    // table was dropped or altered since: the driver prepares again.
    if (prepared_.Knows(id)) {
      CHARYBDIS_PROBE(backend_.probes(), "cql.prepared_outdated_by_schema");
    } else {
      CHARYBDIS_PROBE(backend_.probes(), "cql.unprepared");
    }
    Reply(stream, ErrorResponse(UnpreparedError(id)));
    return true;
  }
  RunPrepared(stream, std::move(prepared), std::move(options), schema);
  return true;
}

}  // namespace charybdis::cql
