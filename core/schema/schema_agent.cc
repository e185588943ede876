#include "core/schema/schema_agent.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/client_address.h"
#include "core/data/checked_value.h"
#include "core/data/token.h"

namespace charybdis {

namespace {

// Bounds what a burst of DDL can hold in memory; DDL is rare.
constexpr size_t kMaxQueuedChanges = 1000;

ClientResponse Failure(ClientResponse::Code code, std::string message) {
  ClientResponse response;
  response.set_code(code);
  response.set_message(std::move(message));
  return response;
}

}  // namespace

SchemaUpdate EntriesOf(const cql::SchemaLog& log) {
  SchemaUpdate update;
  for (const cql::SchemaLogEntry& entry : log.entries()) {
    SchemaUpdate::Entry* out = update.add_entries();
    out->set_keyspace(entry.keyspace);
    out->set_statement(entry.statement);
  }
  CHARYBDIS_ASSERT(static_cast<size_t>(update.entries_size()) == log.entries().size());
  return update;
}

void AppendNewEntries(const SchemaUpdate& update, cql::SchemaLog& log) {
  for (size_t i = log.sequence(); i < static_cast<size_t>(update.entries_size()); i++) {
    log.Append({update.entries(i).keyspace(), update.entries(i).statement()});
  }
  CHARYBDIS_ASSERT(log.sequence() >= static_cast<uint64_t>(update.entries_size()));
}

SchemaAgent::SchemaAgent(ShardEnv env, uint32_t shards, cql::SchemaLog& log, OnChange on_change, Replicate replicate,
                         Datacenters datacenters)
    : env_(env),
      shards_(shards),
      log_(log),
      on_change_(std::move(on_change)),
      replicate_(std::move(replicate)),
      datacenters_(std::move(datacenters)) {
  CHARYBDIS_ASSERT(env.self.shard == 0);
  CHARYBDIS_ASSERT(on_change_ != nullptr && replicate_ != nullptr && datacenters_ != nullptr);
  // Distinct from an earlier life's ids, which a coordinator may remember.
  request_id_base_ = env.random->Next() >> 1;
}

void SchemaAgent::Start() {
  env_.storage->Get(kLocalKey, [this](auto stored) { OnLoaded(std::move(stored)); });
}

void SchemaAgent::OnLoaded(absl::StatusOr<std::optional<std::string>> stored) {
  CHARYBDIS_ASSERT(step_ == Step::kLoading);
  SchemaUpdate saved;
  const std::optional<std::string_view> payload =
      stored.ok() && stored->has_value() ? checked_value::Open(kLocalKey, **stored) : std::nullopt;
  if (payload && saved.ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
    AppendNewEntries(saved, log_);
  } else if (!stored.ok() || stored->has_value()) {
    // A failed disk or a corrupt copy: the peers' heartbeats show what is
    // missing, and the log is read back from them.
    read_wanted_ = true;
  }
  step_ = Step::kIdle;
  if (log_.sequence() > 0) on_change_();
  Next();
}

void SchemaAgent::Save(std::function<void()> then) {
  WriteBatch batch;
  batch.Put(kLocalKey, checked_value::Seal(kLocalKey, EntriesOf(log_).SerializeAsString()));
  step_ = Step::kSaving;
  // A failed write is not retried: the log itself is replicated, and a
  // restart without the copy reads it back.
  env_.storage->Apply(std::move(batch), Durability::kSynced, [this, then = std::move(then)](absl::Status) {
    step_ = Step::kIdle;
    then();
  });
}

void SchemaAgent::OnRequest(const Envelope& message) {
  const ClientRequest& request = message.client_request();
  CHARYBDIS_ASSERT(request.has_schema_change());
  Change change;
  change.client = ClientAddressOf(message);
  change.request_id = request.request_id();
  change.entry = {request.schema_change().keyspace(), request.schema_change().statement()};
  if (changes_.size() >= kMaxQueuedChanges) {
    return Reply(change, Failure(ClientResponse::UNAVAILABLE, "too many schema changes are queued on this node"));
  }
  changes_.push_back(std::move(change));
  CHARYBDIS_ASSERT(changes_.size() <= kMaxQueuedChanges);
  Next();
}

void SchemaAgent::Submit(cql::SchemaLogEntry entry, std::function<void(ClientResponse)> answer) {
  CHARYBDIS_ASSERT(answer != nullptr);
  Change change;
  change.answer = std::move(answer);
  change.entry = std::move(entry);
  // Not refused when many are queued: the operation waits for it.
  changes_.push_back(std::move(change));
  env_.reactor->Post([this] { Next(); });
}

void SchemaAgent::OnPeerSchema(NodeId peer, uint64_t sequence, const std::string& version) {
  std::string& known = peer_versions_[peer];
  if (known != version) {
    known = version;
    on_change_();
  }
  newest_peer_sequence_ = std::max(newest_peer_sequence_, sequence);
  // Buggify: as if this heartbeat's news were missed; the next one tells
  // again, and a change checked meanwhile against the stale schema loses
  // its append and is checked again (schema.append_lost_race).
  if (sequence > log_.sequence() && !read_wanted_ && !env_.buggify->Fires("schema.ignore_peer_ahead")) {
    CHARYBDIS_PROBE(env_.probes, "schema.behind_a_peer");
    read_wanted_ = true;
    Next();
  }
}

void SchemaAgent::Stamp(Heartbeat& heartbeat) const {
  heartbeat.set_schema_sequence(log_.sequence());
  heartbeat.set_schema_version(log_.version());
}

// One request of the log at a time: a read when the log may be longer than
// what this node applied (a change checked against a stale schema would
// only lose its append), else the first queued change.
void SchemaAgent::Next() {
  while (step_ == Step::kIdle) {
    if (read_wanted_) return ReadLog();
    if (changes_.empty()) return;
    Append(changes_.front());
  }
}

void SchemaAgent::ReadLog() {
  CHARYBDIS_ASSERT(read_wanted_);  // Next reads only when the log may be longer
  // A change queued before this read is checked after it against every
  // change that was made before it came (a SERIAL read sees them all).
  for (Change& change : changes_) change.checked_after_read = true;
  ClientRequest request;
  ReadOp* read = request.mutable_read();
  read->set_table(cql::kSchemaLogTable);
  read->set_partition_key(cql::kSchemaLogPartition);
  read->set_range(true);
  read->set_start(cql::SchemaLogKey(log_.sequence() + 1));
  read->set_consistency(CL_SERIAL);
  Send(std::move(request), Step::kReading);
}

void SchemaAgent::OnLogRead(const ClientResponse& response) {
  CHARYBDIS_ASSERT(step_ == Step::kReading);
  CHARYBDIS_ASSERT(in_flight_ == 0);
  if (response.code() != ClientResponse::OK) {
    // Without the rest of the log no change can be checked: fail what waits
    // rather than hold clients, and try again later.
    FailQueued(response);
    step_ = Step::kWaiting;
    env_.clock->After(kRetryDelay, [this] {
      step_ = Step::kIdle;
      Next();
    });
    return;
  }
  const uint64_t before = log_.sequence();
  for (const ResultRow& row : response.rows()) {
    // The read starts after what was applied, and appends are IF NOT
    // EXISTS on the next number, so the log has no gaps.
    CHARYBDIS_ASSERT(cql::SchemaLogSequence(row.clustering_key()) == log_.sequence() + 1);
    cql::SchemaLogEntry entry;
    for (const ResultCell& cell : row.cells()) {
      if (cell.column() == cql::kSchemaLogKeyspaceColumn) entry.keyspace = cell.value();
      if (cell.column() == cql::kSchemaLogStatementColumn) entry.statement = cell.value();
    }
    log_.Append(std::move(entry));
  }
  CHARYBDIS_ASSERT(log_.sequence() == before + static_cast<uint64_t>(response.rows_size()));
  read_wanted_ = false;
  step_ = Step::kIdle;
  if (log_.sequence() == before) return Next();
  on_change_();
  Save([this] { Next(); });
}

void SchemaAgent::Append(Change& change) {
  // Next appends the first queued change, one at a time.
  CHARYBDIS_ASSERT(step_ == Step::kIdle);
  CHARYBDIS_ASSERT(!changes_.empty());
  CHARYBDIS_ASSERT(&change == &changes_.front());
  const absl::StatusOr<bool> changes = log_.Check(change.entry, datacenters_());
  if (!changes.ok() && !change.checked_after_read) {
    // Refused here, perhaps only because this node is behind (a CREATE
    // TABLE in a keyspace made elsewhere a moment ago): read the rest of
    // the log, then check again (Next reads before it appends).
    CHARYBDIS_PROBE(env_.probes, "schema.read_before_refusing");
    change.checked_after_read = true;
    read_wanted_ = true;
    return;
  }
  if (!changes.ok() || !*changes) {
    ClientResponse answer;
    if (!changes.ok()) {
      answer = Failure(ClientResponse::INVALID_REQUEST, std::string(changes.status().message()));
      answer.set_schema_refusal(static_cast<uint32_t>(changes.status().code()));
    }
    answer.set_schema_version(log_.version());  // sequence 0: nothing appended
    Reply(change, std::move(answer));
    changes_.pop_front();
    return;
  }
  if (change.answer == nullptr) {
    if (std::optional<cql::SchemaLog::ReplicationChange> replication = log_.ReplicationChangeOf(change.entry)) {
      // The data moves first: a topology operation, which appends this
      // entry once it is in place, and answers the client when done.
      CHARYBDIS_PROBE(env_.probes, "schema.replication_change_asked");
      replicate_(*std::move(replication), change.entry,
                 [this, client = change.client, request_id = change.request_id](ClientResponse answer) {
                   Change asked;
                   asked.client = client;
                   asked.request_id = request_id;
                   Reply(asked, std::move(answer));
                 });
      changes_.pop_front();
      return;
    }
  }
  ClientRequest request;
  CasOp* cas = request.mutable_cas();
  cas->set_serial_consistency(CL_SERIAL);
  cas->set_commit_consistency(CL_QUORUM);
  CasStatement* statement = cas->add_statement();
  statement->set_if_not_exists(true);
  WriteOp* write = statement->mutable_write();
  write->set_table(cql::kSchemaLogTable);
  write->set_partition_key(cql::kSchemaLogPartition);
  write->set_clustering_key(cql::SchemaLogKey(log_.sequence() + 1));
  ColumnValue* keyspace = write->add_put();
  keyspace->set_column(cql::kSchemaLogKeyspaceColumn);
  keyspace->set_value(change.entry.keyspace);
  ColumnValue* text = write->add_put();
  text->set_column(cql::kSchemaLogStatementColumn);
  text->set_value(change.entry.statement);
  Send(std::move(request), Step::kAppending);
}

void SchemaAgent::OnAppended(const ClientResponse& response) {
  CHARYBDIS_ASSERT(in_flight_ == 0);
  CHARYBDIS_ASSERT(!changes_.empty());
  Change& change = changes_.front();
  step_ = Step::kIdle;
  if (response.code() == ClientResponse::OK && !response.applied()) {
    // Another node appended this number first: read it, check again.
    CHARYBDIS_PROBE(env_.probes, "schema.append_lost_race");
    read_wanted_ = true;
    if (++change.attempts < kMaxAttempts) return Next();
    ClientResponse contended = Failure(ClientResponse::WRITE_TIMEOUT,
                                       absl::StrCat("schema changes of other nodes won ", kMaxAttempts, " times in a row"));
    contended.set_consistency(CL_SERIAL);
    contended.set_write_type("CAS");
    Reply(change, std::move(contended));
  } else if (response.code() == ClientResponse::OK) {
    log_.Append(change.entry);
    on_change_();
    // Acknowledged once this node keeps it too: after a restart of every
    // node, this one's heartbeats still tell the others.
    return Save([this] {
      ClientResponse done;
      done.set_schema_sequence(log_.sequence());
      done.set_schema_version(log_.version());
      Reply(changes_.front(), std::move(done));
      changes_.pop_front();
      Next();
    });
  } else {
    // Unavailable, or a timeout that may have appended: the next read tells.
    read_wanted_ = true;
    Reply(change, response);
  }
  changes_.pop_front();
  Next();
}

void SchemaAgent::Send(ClientRequest request, Step step) {
  CHARYBDIS_ASSERT(step_ == Step::kIdle);
  CHARYBDIS_ASSERT(in_flight_ == 0);
  const uint64_t id = request_id_base_ + ++sent_;
  request.set_request_id(id);
  in_flight_ = id;
  CHARYBDIS_ASSERT(in_flight_ != 0);  // 0 means none awaited
  step_ = step;
  timeout_ = env_.clock->After(kRequestTimeout, [this, id, step] {
    if (in_flight_ != id) return;
    ClientResponse lost = Failure(step == Step::kReading ? ClientResponse::READ_TIMEOUT : ClientResponse::WRITE_TIMEOUT,
                                  "the schema log's request got no answer");
    lost.set_request_id(id);
    lost.set_write_type("CAS");
    OnResponse(lost);
  });
  Envelope message;
  *message.mutable_client_request() = std::move(request);
  const ShardId owner = ShardOf(TokenOf(cql::kSchemaLogPartition), shards_);
  env_.network->Send(Address{env_.self.node, owner}, std::move(message));
}

void SchemaAgent::OnResponse(const ClientResponse& response) {
  if (in_flight_ == 0 || response.request_id() != in_flight_) return;  // late, or a duplicate
  in_flight_ = 0;
  env_.clock->Cancel(timeout_);
  if (step_ == Step::kReading) return OnLogRead(response);
  CHARYBDIS_ASSERT(step_ == Step::kAppending);
  OnAppended(response);
}

void SchemaAgent::Reply(const Change& change, ClientResponse response) {
  if (change.answer != nullptr) {
    // Posted: the operation submits from inside its own steps.
    env_.reactor->Post([answer = change.answer, response = std::move(response)] { answer(response); });
    return;
  }
  response.set_request_id(change.request_id);
  Envelope message;
  *message.mutable_client_response() = std::move(response);
  env_.network->Send(change.client, std::move(message));
}

void SchemaAgent::FailQueued(const ClientResponse& why) {
  ClientResponse failure = why;
  failure.set_message(absl::StrCat("the schema log could not be read: ", why.message()));
  for (const Change& change : changes_) Reply(change, failure);
  changes_.clear();
}

}  // namespace charybdis
