#include "sim/cql_workload.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cql/connection.h"
#include "core/cql/schema.h"
#include "core/cql/wire.h"
#include "core/env/assert.h"
#include "sim/cql_backend.h"
#include "sim/cql_frames.h"

namespace charybdis::sim {

namespace {

// A statement as it goes out: as a QUERY, or as an EXECUTE of its
// prepared form.
struct Outgoing {
  std::string text;
  ConsistencyLevel level = CL_QUORUM;
  ConsistencyLevel serial = CL_UNSET;
  int32_t page_size = 0;
  std::optional<std::string> paging_state;
  bool prepared = false;
  bool reprepared = false;  // after an Unprepared answer, once
};

}  // namespace

struct CqlWorkload::Client {
  size_t index = 0;
  NodeId address = 0;  // its own, from Cluster::AddClient
  uint32_t host = 0;
  uint32_t remaining = 0;
  // The operation in flight: its number (0: none), what it is, when sent.
  uint64_t operation = 0;
  GeneratedOp pending;
  std::optional<size_t> logged_batch;  // when the operation is one
  std::optional<GeneratedPlainOp> plain;  // when the operation is one
  uint32_t pages = 0;                     // of a plain read, so far
  // A scan's rows so far, each with its partition.
  std::vector<std::pair<std::string, model::ObservedRow>> scanned;
  Nanos sent_at = 0;
  // How the operation goes out (Send), and whether the frame in flight
  // is its PREPARE.
  Outgoing outgoing;
  bool preparing = false;
  // Its connection (to one node at a time, in one of its runs), as a driver's.
  std::unique_ptr<SimCqlBackend> backend;
  uint64_t node_starts = 0;
  uint64_t last_request_id = 0;  // of its backends so far
  std::unique_ptr<cql::Connection> connection;
  // What its connection's frames are compressed with, drawn at each
  // connect, as drivers ask for it in STARTUP.
  cql::Compression compression = cql::Compression::kNone;
  // The ids of the statements it prepared, by text, whichever node it
  // prepared them on: as a driver, it sends an EXECUTE to the node it is
  // connected to now, which answers Unprepared if it has not seen it.
  std::map<std::string, std::string> prepared_ids;
};

namespace {

std::string KeyspaceName(const std::string& workload) {
  std::string name = "w_";
  for (char c : workload) name += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '_';
  return name;
}

// Each datacenter holds up to three replicas.
uint32_t ReplicasIn(const Topology& topology, uint32_t dc) { return std::min(3u, topology.NodesIn(dc)); }

// The keyspace's, as created: `replicas` in each datacenter (0: ReplicasIn).
std::string Replication(const Topology& topology, uint32_t replicas) {
  std::vector<std::string> factors{"'class': 'NetworkTopologyStrategy'"};
  for (uint32_t dc = 0; dc < topology.datacenters.size(); dc++) {
    const uint32_t factor = replicas != 0 ? std::min(replicas, ReplicasIn(topology, dc)) : ReplicasIn(topology, dc);
    factors.push_back(absl::StrCat("'", topology.datacenters[dc], "': ", factor));
  }
  return "{" + absl::StrJoin(factors, ", ") + "}";
}

uint32_t ReplicationFactor(const Topology& topology) {
  uint32_t replicas = 0;
  for (uint32_t dc = 0; dc < topology.datacenters.size(); dc++) replicas += ReplicasIn(topology, dc);
  return replicas;
}

constexpr double kMoveChance = 0.1;

// How an operation ended, for the results: ok, failed (no effect), unknown.
const char* OutcomeText(model::LwtOp::Outcome outcome) {
  switch (outcome) {
    case model::LwtOp::Outcome::kOk: return "ok";
    case model::LwtOp::Outcome::kFail: return "failed";
    case model::LwtOp::Outcome::kInfo: return "unknown";
  }
  CHARYBDIS_ASSERT(false);
  return "";
}

// The workload's stream ids: 1..30000, never 0 (STARTUP's).
int16_t StreamOf(uint64_t operation) { return static_cast<int16_t>(1 + operation % 30000); }

// The statement was refused as wrong, not for a passing reason.
bool Refused(const CqlAnswer& answer) {
  if (answer.kind != CqlAnswer::Kind::kError) return false;
  switch (static_cast<cql::ErrorCode>(answer.error_code)) {
    case cql::ErrorCode::kInvalid:
    case cql::ErrorCode::kSyntax:
    case cql::ErrorCode::kConfig:
    case cql::ErrorCode::kUnprepared:
      return true;
    default:
      return false;
  }
}

}  // namespace

CqlWorkload::CqlWorkload(Simulator& simulator, Cluster& cluster, std::string name, const scenario::CqlWorkload& spec,
                         Random random, Probes* probes)
    : simulator_(simulator),
      cluster_(cluster),
      name_(std::move(name)),
      spec_(spec),
      random_(random),
      probes_(probes),
      generator_(
          [&] {
            Random schema_random = random.Fork(1);
            return RandomSchema(KeyspaceName(name_), schema_random, spec.set_write_fraction() > 0);
          }(),
          spec),
      // The row of a partition past the conditional and plain ones.
      column_lives_(SchemaLives::OfColumn(
          generator_.schema().QualifiedTable(),
          generator_.WhereRow(spec.partitions() + spec.plain_partitions(), generator_.RowKey(0)))),
      table_lives_(SchemaLives::OfTable(generator_.schema().keyspace)),
      batches_(generator_.schema().keyspace + ".b") {
  CHARYBDIS_ASSERT(spec.clients() > 0);
  CHARYBDIS_ASSERT(probes != nullptr);
  for (uint32_t i = 0; i < spec.clients(); i++) {
    auto client = std::make_unique<Client>();
    client->index = i;
    client->address = cluster.AddClient(0);
    client->host = SimNetwork::HostOf(client->address);
    client->remaining = spec.operations_per_client();
    clients_.push_back(std::move(client));
  }
  if (spec.alter_table_every_ms() > 0) {
    schema_client_ = std::make_unique<Client>();
    schema_client_->address = cluster.AddClient(0);
    schema_client_->host = SimNetwork::HostOf(schema_client_->address);
  }
}

CqlWorkload::~CqlWorkload() {
  // Backends clear their receivers; connections go before their backends.
  for (auto& client : clients_) {
    client->connection.reset();
    client->backend.reset();
  }
  if (schema_client_ != nullptr) {
    schema_client_->connection.reset();
    schema_client_->backend.reset();
  }
}

void CqlWorkload::Start() {
  simulator_.Schedule(static_cast<Nanos>(spec_.start_ms()) * kMillisecond,
                      EventTag{EventKind::kClient, clients_[0]->host, 0, 0}, true, [this] { SendDdl(0); });
}

void CqlWorkload::Disconnect(Client& client) {
  // The connection goes before its backend; the request ids go on.
  client.connection.reset();
  if (client.backend != nullptr) client.last_request_id = client.backend->last_request_id();
  client.backend.reset();
}

bool CqlWorkload::Connect(Client& client) {
  if (client.connection != nullptr && cluster_.node(client.backend->node()).running() &&
      cluster_.node(client.backend->node()).starts() == client.node_starts) {
    return true;
  }
  Disconnect(client);
  std::vector<NodeId> candidates;
  for (NodeId node = 1; node <= cluster_.size(); node++) {
    if (!cluster_.node(node).running()) continue;
    // Only DDL may go to a node that does not know the table yet.
    const auto schema = cluster_.node(node).Schema().schema;
    const std::string& keyspace = generator_.schema().keyspace;
    const bool knows = schema->FindTable(keyspace, generator_.schema().table) != nullptr &&
                       (spec_.logged_batch_fraction() == 0 || schema->FindTable(keyspace, "b") != nullptr);
    if (!schema_ready_ || knows) candidates.push_back(node);
  }
  if (candidates.empty()) return false;
  const NodeId node = candidates[random_.Below(candidates.size())];
  client.backend = std::make_unique<SimCqlBackend>(cluster_, client.address, node, probes_, client.last_request_id);
  client.node_starts = cluster_.node(node).starts();
  std::unique_ptr<cql::PreparedStatements>& statements = node_statements_[{node, client.node_starts}];
  if (statements == nullptr) statements = std::make_unique<cql::PreparedStatements>();
  Client* raw = &client;
  static constexpr cql::Compression kCompressions[] = {cql::Compression::kNone, cql::Compression::kLz4,
                                                       cql::Compression::kSnappy};
  client.compression = kCompressions[random_.Below(std::size(kCompressions))];
  client.connection = std::make_unique<cql::Connection>(
      *statements, *client.backend, cql::ShardInfo{}, absl::StrCat("client ", client.address),
      [this, raw](std::string frame) {
        frame = UncompressedFrame(raw->compression, std::move(frame));
        const cql::FrameHeader header = cql::ParseHeader(frame);
        if (header.stream == 0 || raw->operation == 0 || header.stream != StreamOf(raw->operation)) return;
        if (raw == schema_client_.get()) {
          OnAlterAnswer(frame);
        } else if (reading_back_) {
          OnReadBackAnswer(frame);
        } else if (schema_ready_) {
          OnAnswer(*raw, frame);
        } else {
          OnDdlAnswer(frame);
        }
      });
  cql::FrameHeader startup;
  startup.opcode = static_cast<uint8_t>(cql::Opcode::kStartup);
  CHARYBDIS_ASSERT(client.connection->OnFrame(startup, StartupBody(client.compression)));
  return true;
}

std::vector<std::string> CqlWorkload::Ddl() const {
  std::vector<std::string> ddl =
      generator_.schema().Ddl(Replication(cluster_.topology(), spec_.replicas_per_datacenter()));
  if (spec_.logged_batch_fraction() > 0) ddl.push_back(batches_.CreateTable());
  return ddl;
}

void CqlWorkload::SendDdl(size_t index) {
  Client& client = *clients_[0];
  ddl_index_ = index;
  const std::vector<std::string> ddl = Ddl();
  if (index == ddl.size()) {
    schema_ready_ = true;
    Disconnect(client);  // reconnect where the table is known
    StartClients();
    return;
  }
  if (!Connect(client)) {
    simulator_.Schedule(simulator_.now() + 100 * kMillisecond, EventTag{EventKind::kClient, client.host, 0, 0}, true,
                        [this, index] { SendDdl(index); });
    return;
  }
  client.pending = GeneratedOp{ddl[index], {}};
  const uint64_t operation = SendQuery(client, QueryBody(ddl[index], CL_QUORUM));
  simulator_.Schedule(simulator_.now() + 10 * kSecond, EventTag{EventKind::kClient, client.host, 0, operation}, true,
                      [this, &client, operation, index] {
                        if (client.operation != operation) return;
                        client.operation++;  // a late answer is stale now
                        SendDdl(index);      // CREATE again: AlreadyExists means it took
                      });
}

void CqlWorkload::StartClients() {
  for (auto& client : clients_) {
    client->operation++;  // past the DDL's
    After(*client, static_cast<Nanos>(random_.Below(10)) * kMillisecond);
  }
  if (schema_client_ != nullptr) AlterNext();
}

void CqlWorkload::AlterNext() {
  AlterAfter(Lives().Before(static_cast<Nanos>(spec_.alter_table_every_ms()) * kMillisecond));
}

void CqlWorkload::AlterAfter(Nanos delay) {
  simulator_.Schedule(simulator_.now() + delay, EventTag{EventKind::kClient, schema_client_->host, 0, 0}, true,
                      [this] { Alter(); });
}

void CqlWorkload::Alter() {
  if (finished_clients_ == clients_.size()) return;
  Client& client = *schema_client_;
  if (!Connect(client)) return AlterAfter(100 * kMillisecond);
  client.pending = GeneratedOp{Lives().Statement(), {}};
  const uint64_t operation = SendQuery(client, QueryBody(client.pending.text, CL_QUORUM));
  // The next change waits for this one's answer, or its timeout.
  simulator_.Schedule(simulator_.now() + 10 * kSecond, EventTag{EventKind::kClient, client.host, 0, 0}, true,
                      [this, operation] {
                        if (schema_client_->operation != operation) return;
                        schema_client_->operation++;  // a late answer is stale now
                        OnLivesAnswer(nullptr);
                      });
}

void CqlWorkload::OnAlterAnswer(const std::string& frame) {
  Client& client = *schema_client_;
  client.operation++;  // its timeout finds it answered
  const CqlAnswer answer = DecodeAnswer(frame);
  // A change whose fate was unknown may make the next one refused (a DROP
  // of a column never added): outcomes, not refusals.
  OnLivesAnswer(&answer);
}

void CqlWorkload::OnLivesAnswer(const CqlAnswer* answer) {
  outcomes_[Lives().OnAnswer(answer)]++;
  if (Lives().BetweenLives()) table_life_next_ = !table_life_next_;
  AlterNext();
}

void CqlWorkload::OnDdlAnswer(const std::string& frame) {
  Client& client = *clients_[0];
  const CqlAnswer answer = DecodeAnswer(frame);
  client.operation++;  // its timeout finds it answered
  const bool took = answer.kind == CqlAnswer::Kind::kSchemaChange ||
                    (answer.kind == CqlAnswer::Kind::kError &&
                     answer.error_code == static_cast<int32_t>(cql::ErrorCode::kAlreadyExists));
  // A node behind the others reads the schema log before it refuses
  // (core/schema/schema_agent.cc), so a refusal is the cluster's: the
  // workload gives up, and the check says why.
  if (!took && Refused(answer)) {
    refused_.push_back(absl::StrCat(client.pending.text, ": ", answer.error_message));
    return;
  }
  const size_t next = took ? ddl_index_ + 1 : ddl_index_;
  simulator_.Schedule(simulator_.now() + (took ? 0 : kSecond), EventTag{EventKind::kClient, client.host, 0, 0}, true,
                      [this, next] { SendDdl(next); });
}

void CqlWorkload::After(Client& client, Nanos delay) {
  Client* raw = &client;
  simulator_.Schedule(simulator_.now() + delay, EventTag{EventKind::kClient, client.host, 0, client.operation}, true,
                      [this, raw] { SendNext(*raw); });
}

void CqlWorkload::SendNext(Client& client) {
  if (client.remaining == 0) {
    finished_clients_++;
    CHARYBDIS_ASSERT(finished_clients_ <= clients_.size());
    // Once every batch is answered, and the batch log had time to replay
    // what a coordinator left (twice the write timeout), read them back.
    if (finished_clients_ == clients_.size() && !batches_.empty()) {
      reading_back_ = true;
      simulator_.Schedule(simulator_.now() + 10 * kSecond, EventTag{EventKind::kClient, clients_[0]->host, 0, 0},
                          true, [this] { ReadBack(0); });
    }
    return;
  }
  // A driver spreads its requests over the nodes: now and then a client
  // moves to another one (where its prepared statements may be unknown).
  if (client.connection != nullptr && random_.Chance(kMoveChance)) Disconnect(client);
  if (!Connect(client)) {
    After(client, 100 * kMillisecond);  // every node is down, or none knows the table yet
    return;
  }
  client.logged_batch.reset();
  if (spec_.plain_fraction() > 0 && random_.Chance(spec_.plain_fraction())) {
    SendPlain(client);
    return;
  }
  if (spec_.logged_batch_fraction() > 0 && random_.Chance(spec_.logged_batch_fraction())) {
    auto [number, text] = batches_.Next(random_);
    client.logged_batch = number;
    client.pending = GeneratedOp{std::move(text), {}};
  } else {
    client.pending = generator_.Next(random_);
  }
  model::LwtOp& op = client.pending.op;
  op.process = client.index;
  op.text = client.pending.text;
  op.call_us = simulator_.now() / kMicrosecond;
  client.sent_at = simulator_.now();
  const ConsistencyLevel serial = spec_.serial_consistency() == CL_UNSET
                                      ? CL_SERIAL
                                      : static_cast<ConsistencyLevel>(spec_.serial_consistency());
  const bool read = op.kind == model::LwtOp::Kind::kSerialRead;
  const bool conditional = !read && !client.logged_batch;
  client.outgoing = Outgoing{client.pending.text, read ? serial : conditional ? CommitLevel() : CL_QUORUM,
                             conditional ? serial : CL_UNSET};
  client.outgoing.prepared = UsePrepared();
  Send(client);
}

ConsistencyLevel CqlWorkload::CommitLevel() {
  // The frame's consistency is a conditional write's commit level: any
  // level a write takes. None changes what a serial read must see (the
  // next round finishes an accepted proposal), so the checks hold for
  // all; each maps through the frame to the coordinator differently.
  static constexpr ConsistencyLevel kLevels[] = {CL_QUORUM, CL_QUORUM, CL_QUORUM, CL_LOCAL_QUORUM,
                                                 CL_ONE,    CL_ANY,    CL_ALL,    CL_EACH_QUORUM};
  return kLevels[random_.Below(std::size(kLevels))];
}

bool CqlWorkload::UsePrepared() {
  return spec_.prepared_fraction() > 0 && random_.Chance(spec_.prepared_fraction());
}

void CqlWorkload::Send(Client& client) {
  const Outgoing& out = client.outgoing;
  client.preparing = false;
  if (!out.prepared) {
    ScheduleTimeout(client, SendQuery(client, QueryBody(out.text, out.level, out.serial, out.page_size, out.paging_state)));
    return;
  }
  const std::map<std::string, std::string>& ids = client.prepared_ids;
  auto id = ids.find(out.text);
  client.preparing = id == ids.end();
  // Sent last: the answer may come back within SendFrame.
  const std::string body = client.preparing ? PrepareBody(out.text)
                                            : ExecuteBody(id->second, out.level, out.serial, out.page_size, out.paging_state);
  ScheduleTimeout(client, SendFrame(client, client.preparing ? cql::Opcode::kPrepare : cql::Opcode::kExecute, body));
}

bool CqlWorkload::SentAgain(Client& client, const CqlAnswer& answer) {
  Outgoing& out = client.outgoing;
  if (!out.prepared) return false;
  std::map<std::string, std::string>& ids = client.prepared_ids;
  if (client.preparing) {
    if (answer.kind != CqlAnswer::Kind::kPrepared) return false;  // the statement's own error
    ids[out.text] = answer.prepared_id;
    Send(client);
    return true;
  }
  // Another node, a restart, or the table changed since: prepare it
  // again, once.
  const bool unprepared = answer.kind == CqlAnswer::Kind::kError &&
                          answer.error_code == static_cast<int32_t>(cql::ErrorCode::kUnprepared);
  if (!unprepared || out.reprepared) return false;
  out.reprepared = true;
  ids.erase(out.text);
  Send(client);
  return true;
}

void CqlWorkload::ScheduleTimeout(Client& client, uint64_t operation) {
  const Nanos timeout = static_cast<Nanos>(spec_.timeout_ms() > 0 ? spec_.timeout_ms() : 10000) * kMillisecond;
  Client* raw = &client;
  simulator_.Schedule(simulator_.now() + timeout, EventTag{EventKind::kClient, client.host, 0, operation}, true,
                      [this, raw, operation] {
                        if (raw->operation != operation) return;
                        if (raw->plain) {
                          CompletePlain(*raw, model::LwtOp::Outcome::kInfo);
                        } else {
                          Complete(*raw, model::LwtOp::Outcome::kInfo);
                        }
                      });
}

void CqlWorkload::SendPlain(Client& client) {
  const int64_t now_us = simulator_.now() / kMicrosecond;
  // Clients' clocks differ: a timestamp up to a second behind true time,
  // so that a later write may lose to an earlier one.
  const int64_t timestamp_us = now_us - static_cast<int64_t>(random_.Below(1'000'000));
  client.plain = generator_.NextPlain(random_, plain_writes_, timestamp_us);
  client.pages = 0;
  model::PlainOp& op = client.plain->op;
  op.text = client.plain->text;
  op.call_us = now_us;
  op.replicas = ReplicasOf(client.plain->level);
  client.sent_at = simulator_.now();
  client.outgoing = Outgoing{op.text, client.plain->level, CL_UNSET, client.plain->page_size};
  client.outgoing.prepared = UsePrepared();
  SendPlainPage(client, std::nullopt);
}

void CqlWorkload::SendPlainPage(Client& client, const std::optional<std::string>& paging_state) {
  CHARYBDIS_ASSERT(client.plain.has_value());
  client.pages++;
  client.outgoing.paging_state = paging_state;
  client.outgoing.reprepared = false;
  Send(client);
}

uint32_t CqlWorkload::ReplicasOf(ConsistencyLevel level) const {
  const uint32_t replicas = ReplicationFactor(cluster_.topology());
  switch (level) {
    case CL_ONE: return 1;
    case CL_QUORUM: return replicas / 2 + 1;
    case CL_ALL: return replicas;
    default: CHARYBDIS_ASSERT(false);
  }
  return replicas;
}

std::optional<model::LwtOp::Outcome> CqlWorkload::FailedOutcome(const std::string& text, const CqlAnswer& answer) {
  if (Refused(answer)) {
    refused_.push_back(absl::StrCat(text, ": ", answer.error_message));
    return model::LwtOp::Outcome::kFail;
  }
  if (answer.kind != CqlAnswer::Kind::kError) return std::nullopt;
  // Unavailable had no effect; timeouts, failures and overload may have.
  const bool unavailable = answer.error_code == static_cast<int32_t>(cql::ErrorCode::kUnavailable);
  return unavailable ? model::LwtOp::Outcome::kFail : model::LwtOp::Outcome::kInfo;
}

model::LwtOp::Outcome CqlWorkload::Unreadable(const std::string& text, const std::string& why) {
  refused_.push_back(absl::StrCat(text, ": an answer the model cannot read", why.empty() ? "" : " (" + why + ")"));
  return model::LwtOp::Outcome::kInfo;
}

void CqlWorkload::OnPlainAnswer(Client& client, const CqlAnswer& answer) {
  const model::PlainOp& op = client.plain->op;
  if (auto failed = FailedOutcome(op.text, answer)) return CompletePlain(client, *failed);
  const bool write = op.kind == model::PlainOp::Kind::kWrite;
  if (write ? answer.kind != CqlAnswer::Kind::kVoid : !ReadPage(client, answer)) {
    return CompletePlain(client, Unreadable(op.text, answer.malformed));
  }
  if (!write && answer.paging_state) {
    SendPlainPage(client, answer.paging_state);
    return;
  }
  CompletePlain(client, model::LwtOp::Outcome::kOk);
}

bool CqlWorkload::ReadPage(Client& client, const CqlAnswer& answer) {
  const GeneratedPlainOp& plain = *client.plain;
  if (answer.kind != CqlAnswer::Kind::kRows) return false;
  if (plain.count) {
    // One row, one bigint, one page: the count of every row.
    if (answer.paging_state || answer.columns != std::vector<std::string>{"count"} || answer.rows.size() != 1 ||
        !answer.rows[0][0] || !std::holds_alternative<int64_t>(*answer.rows[0][0])) {
      return false;
    }
    client.plain->op.count = std::get<int64_t>(*answer.rows[0][0]);
    return true;
  }
  // A page holds at most page_size rows, and at least one when more
  // follow (a driver may take an empty page for the end: the Python
  // driver of Debian does); a read of one page gets no paging state; no
  // read takes more pages than the partition has rows, and one more to
  // learn there are no more.
  if (plain.page_size > 0 && answer.rows.size() > static_cast<size_t>(plain.page_size)) return false;
  if (answer.rows.empty() && answer.paging_state) return false;
  if (plain.page_size == 0 && answer.paging_state) return false;
  const uint32_t partitions = plain.scan ? spec_.partitions() + spec_.plain_partitions() : 1;
  if (answer.paging_state && client.pages > partitions * spec_.rows_per_partition()) return false;
  std::vector<size_t> key_columns;  // where the answer has the partition key's columns
  for (const GeneratedSchema::Column& column : generator_.schema().partition) {
    const auto found = std::find(answer.columns.begin(), answer.columns.end(), column.name);
    if (plain.scan && found == answer.columns.end()) return false;
    key_columns.push_back(static_cast<size_t>(found - answer.columns.begin()));
  }
  for (size_t row = 0; row < answer.rows.size(); row++) {
    model::ObservedRow observed;
    if (!ObservedRowOf(answer, row, observed)) return false;
    if (!plain.scan) {
      client.plain->op.rows.push_back(std::move(observed));
      continue;
    }
    std::vector<model::Value> key;
    for (size_t column : key_columns) {
      const std::optional<model::Value>& value = answer.rows[row][column];
      if (!value) return false;
      key.push_back(*value);
    }
    const std::optional<int64_t> partition = generator_.schema().PartitionIndexOf(key);
    if (!partition) return false;  // a key the workload never wrote
    client.scanned.emplace_back(absl::StrCat(*partition), std::move(observed));
  }
  return true;
}

std::string CqlWorkload::RecordScan(Client& client) {
  const model::PlainOp& scan = client.plain->op;
  const std::optional<TokenBounds>& bounds = client.plain->tokens;
  const std::set<int64_t> in(client.plain->partitions_in.begin(), client.plain->partitions_in.end());
  std::map<std::string, std::vector<model::ObservedRow>> rows;  // by partition
  std::string previous;
  std::optional<int64_t> previous_token;
  for (auto& [partition, row] : client.scanned) {
    // A partition's rows come together: one that comes back after another
    // partition's was read twice.
    if (partition != previous && rows.count(partition) > 0) return absl::StrCat("partition ", partition, " in two runs");
    int64_t key = 0;
    const bool named = absl::SimpleAtoi(partition, &key);
    CHARYBDIS_ASSERT(named);  // ReadPage named it by its index
    const int64_t token = generator_.schema().PartitionToken(key);
    if (bounds && !bounds->Hold(token)) {
      return absl::StrCat("partition ", partition, " (token ", token, ") outside the scan's token() bounds");
    }
    if (!in.empty() && in.count(key) == 0) return absl::StrCat("partition ", partition, " not in the IN list");
    if (in.empty() && previous_token && token < *previous_token) {
      return absl::StrCat("partition ", partition, " (token ", token, ") after token ", *previous_token,
                          ": out of ring order");
    }
    previous_token = token;
    previous = partition;
    rows[partition].push_back(std::move(row));
  }
  for (uint32_t i = 0; i < spec_.plain_partitions(); i++) {
    const int64_t partition = spec_.partitions() + i;
    // Outside the bounds (or the IN list) the read took nothing of it, and
    // says nothing of it.
    if (bounds && !bounds->Hold(generator_.schema().PartitionToken(partition))) continue;
    if (!in.empty() && in.count(partition) == 0) continue;
    model::PlainOp read = scan;
    read.partition = absl::StrCat(partition);
    read.rows = std::move(rows[read.partition]);
    plain_history_.push_back(std::move(read));
  }
  return "";
}

void CqlWorkload::CompletePlain(Client& client, model::LwtOp::Outcome outcome) {
  CHARYBDIS_ASSERT(client.plain.has_value());
  model::PlainOp& op = client.plain->op;
  op.outcome = outcome;
  op.return_us = simulator_.now() / kMicrosecond;
  op.clock = ClockWindow(client.sent_at, simulator_.now());
  const bool read = op.kind == model::PlainOp::Kind::kRead;
  const bool scan = client.plain->scan;
  outcomes_[absl::StrCat(!client.plain->batched.empty()          ? "plain batch "
                         : client.plain->count                  ? "plain count "
                         : !read                                ? "plain write "
                         : !client.plain->partitions_in.empty() ? "plain read of partitions IN "
                         : scan                                 ? "plain scan "
                         : client.pages > 1                     ? "plain paged read "
                                                                : "plain read ",
                         OutcomeText(outcome))]++;
  if (!scan) {
    // A batch's writes are known alike: each as the batch ended.
    for (model::PlainOp& part : client.plain->batched) {
      part.outcome = op.outcome;
      part.text = op.text;
      part.call_us = op.call_us;
      part.return_us = op.return_us;
      part.clock = op.clock;
      part.replicas = op.replicas;
      plain_history_.push_back(std::move(part));
    }
    plain_history_.push_back(std::move(op));
  } else if (outcome == model::LwtOp::Outcome::kOk) {
    if (const std::string wrong = RecordScan(client); !wrong.empty()) Unreadable(op.text, wrong);
  }
  client.plain.reset();
  client.scanned.clear();
  Finished(client);
}

void CqlWorkload::Finished(Client& client) {
  CHARYBDIS_ASSERT(client.remaining > 0);
  client.operation++;  // a late answer is stale now
  client.remaining--;
  After(client, static_cast<Nanos>(spec_.think_time_ms()) * kMillisecond);
}

void CqlWorkload::OnAnswer(Client& client, const std::string& frame) {
  const CqlAnswer answer = DecodeAnswer(frame);
  if (SentAgain(client, answer)) return;
  if (client.plain) {
    OnPlainAnswer(client, answer);
    return;
  }
  model::LwtOp& op = client.pending.op;
  if (auto failed = FailedOutcome(client.pending.text, answer)) return Complete(client, *failed);
  if (client.logged_batch ? answer.kind != CqlAnswer::Kind::kVoid : !ReadAnswer(answer, op)) {
    return Complete(client, Unreadable(client.pending.text, answer.malformed));
  }
  Complete(client, model::LwtOp::Outcome::kOk);
}

void CqlWorkload::Complete(Client& client, model::LwtOp::Outcome outcome) {
  CHARYBDIS_ASSERT(client.operation != 0);
  CHARYBDIS_ASSERT(client.remaining > 0);
  model::LwtOp& op = client.pending.op;
  if (client.logged_batch) {
    batches_.Record(*client.logged_batch, outcome);
    outcomes_[absl::StrCat("logged batch ", OutcomeText(outcome))]++;
    Finished(client);
    return;
  }
  op.outcome = outcome;
  op.return_us = simulator_.now() / kMicrosecond;
  op.clock = ClockWindow(client.sent_at, simulator_.now());
  const bool read = op.kind == model::LwtOp::Kind::kSerialRead;
  const char* result = outcome != model::LwtOp::Outcome::kOk || read ? OutcomeText(outcome)
                       : op.applied                                  ? "applied"
                                                                     : "not applied";
  outcomes_[absl::StrCat(read ? "serial read " : op.statements.size() > 1 ? "batch " : "statement ", result)]++;
  history_.push_back(std::move(op));
  Finished(client);
}

model::Moment CqlWorkload::ClockWindow(Nanos from, Nanos to) const {
  CHARYBDIS_ASSERT(from <= to);
  model::Moment window{INT64_MAX, INT64_MIN};
  for (NodeId node = 1; node <= cluster_.size(); node++) {
    const NodeClock::Range range = cluster_.node(node).clock().Over(from, to);
    window.earliest_us = std::min(window.earliest_us, range.earliest / kMicrosecond);
    window.latest_us = std::max(window.latest_us, range.latest / kMicrosecond);
  }
  return window;
}

uint64_t CqlWorkload::SendFrame(Client& client, cql::Opcode opcode, const std::string& body) {
  CHARYBDIS_ASSERT(client.connection != nullptr);
  // Numbered first: an answer may come back within OnFrame (a refusal).
  const uint64_t operation = ++client.operation;
  // A connection to a node that went down since (a page or an EXECUTE
  // that follows an answer) carries nothing: the operation's timeout
  // ends it, as a driver's would.
  const SimNode& node = cluster_.node(client.backend->node());
  if (!node.running() || node.starts() != client.node_starts) return operation;
  cql::FrameHeader header;
  header.opcode = static_cast<uint8_t>(opcode);
  header.stream = StreamOf(operation);
  if (client.compression == cql::Compression::kNone) {
    CHARYBDIS_ASSERT(client.connection->OnFrame(header, body));
    return operation;
  }
  header.flags |= cql::kCompressedFlag;
  CHARYBDIS_ASSERT(client.connection->OnFrame(header, cql::Compress(client.compression, body)));
  return operation;
}

void CqlWorkload::ReadBack(uint32_t partition) {
  Client& client = *clients_[0];
  read_back_partition_ = partition;
  if (partition == LoggedBatches::kPartitions) {
    reading_back_ = false;
    return;
  }
  if (!Connect(client)) {
    simulator_.Schedule(simulator_.now() + 100 * kMillisecond, EventTag{EventKind::kClient, client.host, 0, 0}, true,
                        [this, partition] { ReadBack(partition); });
    return;
  }
  const uint64_t operation = SendQuery(client, QueryBody(batches_.ReadBack(partition), CL_QUORUM));
  simulator_.Schedule(simulator_.now() + 10 * kSecond, EventTag{EventKind::kClient, client.host, 0, operation}, true,
                      [this, &client, operation, partition] {
                        if (client.operation != operation) return;
                        client.operation++;
                        ReadBack(partition);
                      });
}

void CqlWorkload::OnReadBackAnswer(const std::string& frame) {
  Client& client = *clients_[0];
  client.operation++;  // its timeout finds it answered
  const uint32_t partition = read_back_partition_;
  const bool read = batches_.ReadBackRows(partition, DecodeAnswer(frame));
  // A read that failed (a node just restarted) is tried again.
  simulator_.Schedule(simulator_.now() + (read ? 0 : kSecond), EventTag{EventKind::kClient, client.host, 0, 0}, true,
                      [this, next = read ? partition + 1 : partition] { ReadBack(next); });
}

bool CqlWorkload::ObservedRowOf(const CqlAnswer& answer, size_t row, model::ObservedRow& observed) const {
  const GeneratedSchema& schema = generator_.schema();
  observed.clustering.assign(schema.clustering.size(), model::Value{});
  std::vector<bool> found(schema.clustering.size(), false);
  for (size_t c = 0; c < answer.columns.size(); c++) {
    const std::optional<model::Value>& value = answer.rows[row][c];
    for (size_t k = 0; k < schema.clustering.size(); k++) {
      if (answer.columns[c] != schema.clustering[k].name) continue;
      if (!value) return false;  // no row
      observed.clustering[k] = *value;
      found[k] = true;
    }
    for (const GeneratedSchema::Column& regular : schema.regular) {
      if (answer.columns[c] == regular.name) observed.columns[regular.name] = value;
      // Cassandra names WRITETIME(c)'s column writetime(c); a bigint.
      if (answer.columns[c] == absl::StrCat("writetime(", regular.name, ")") && value) {
        if (!std::holds_alternative<int64_t>(*value)) return false;
        observed.written_at_us[regular.name] = std::get<int64_t>(*value);
      }
    }
    for (const GeneratedSchema::Column& set : schema.sets) {
      if (answer.columns[c] != set.name) continue;
      std::vector<model::Value>& elements = observed.sets[set.name];  // null: none
      if (!value) continue;
      std::optional<std::vector<model::Value>> decoded = IntSetElements(*value);
      if (!decoded) return false;
      elements = std::move(*decoded);
    }
  }
  return std::find(found.begin(), found.end(), false) == found.end();
}

bool CqlWorkload::ReadAnswer(const CqlAnswer& answer, model::LwtOp& op) const {
  if (answer.kind != CqlAnswer::Kind::kRows) return false;
  if (op.kind == model::LwtOp::Kind::kSerialRead) {
    for (size_t row = 0; row < answer.rows.size(); row++) {
      model::ObservedRow observed;
      if (!ObservedRowOf(answer, row, observed)) return false;
      op.rows.push_back(std::move(observed));
    }
    return !answer.paging_state.has_value();  // no paging asked
  }
  // [applied] first; when not applied, the current rows its conditions
  // looked at (one row with only [applied] when there are none).
  if (answer.columns.empty() || answer.columns[0] != "[applied]" || answer.rows.empty()) return false;
  const std::optional<model::Value>& applied = answer.rows[0][0];
  if (!applied || !std::holds_alternative<int64_t>(*applied)) return false;
  op.applied = std::get<int64_t>(*applied) != 0;
  if (op.applied) return answer.rows.size() == 1;
  for (size_t row = 0; row < answer.rows.size(); row++) {
    model::ObservedRow observed;
    if (ObservedRowOf(answer, row, observed)) op.current_rows.push_back(std::move(observed));
  }
  return true;
}

nlohmann::json CqlWorkload::Results() const {
  nlohmann::json outcomes = nlohmann::json::object();
  for (const auto& [what, count] : outcomes_) outcomes[what] = count;
  return nlohmann::json{{"name", name_},
                        {"kind", "cql"},
                        {"done", done()},
                        {"schema", generator_.schema().Ddl("...")[1]},
                        {"operations", history_.size()},
                        {"outcomes", outcomes},
                        {"refused", refused_.size()}};
}

std::vector<CheckResult> CqlWorkload::Checks() const {
  std::vector<CheckResult> checks;
  CheckResult accepted{absl::StrCat(name_, ".statements_accepted"), refused_.empty(),
                       refused_.empty() ? "" : absl::StrCat(refused_.size(), " refused or unreadable, the first: ", refused_[0])};
  checks.push_back(std::move(accepted));
  if (spec_.plain_fraction() > 0) checks.push_back(PlainCheck());
  if (schema_client_ != nullptr) {
    checks.push_back(column_lives_.Check(absl::StrCat(name_, ".dropped_columns_stay_dropped")));
    checks.push_back(table_lives_.Check(absl::StrCat(name_, ".dropped_tables_stay_dropped")));
  }
  const std::string check = absl::StrCat(name_, ".model_linearizable");
  uint64_t judged = 0;
  for (const model::LwtOp& op : history_) judged += op.outcome == model::LwtOp::Outcome::kOk;
  if (judged == 0) {
    checks.push_back(NothingToCheck(check, "no operation of the workload succeeded"));
    return checks;
  }
  if (!batches_.empty() || spec_.logged_batch_fraction() > 0) {
    checks.push_back(batches_.Check(absl::StrCat(name_, ".logged_batches_atomic")));
  }
  const model::LwtCheckResult result = model::CheckLwtLinearizable(history_, generator_.schema().descending);
  CheckResult linearizable{check, result.linearizable && !result.exhausted,
                           absl::StrCat(result.operations, " operations on ", result.partitions, " partitions (",
                                        result.groups, " groups of rows searched apart)")};
  if (!result.detail.empty()) absl::StrAppend(&linearizable.detail, ": ", result.detail);
  checks.push_back(std::move(linearizable));
  return checks;
}

CheckResult CqlWorkload::PlainCheck() const {
  const std::string check = absl::StrCat(name_, ".plain_reads_admitted");
  const model::PlainCheckResult result = model::CheckPlainReads(plain_history_, generator_.schema().descending,
                                                                ReplicationFactor(cluster_.topology()));
  if (result.reads == 0) return NothingToCheck(check, "no plain read succeeded");
  CheckResult admitted{check, result.admitted, absl::StrCat(result.reads, " reads of ", result.writes, " writes")};
  if (!result.detail.empty()) absl::StrAppend(&admitted.detail, ": ", result.detail);
  return admitted;
}

}  // namespace charybdis::sim
