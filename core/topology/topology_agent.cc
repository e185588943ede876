#include "core/topology/topology_agent.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/data/checked_value.h"
#include "core/env/assert.h"
#include "core/env/client_address.h"
#include "core/topology/placement.h"

namespace charybdis::topology {

namespace {

// Bounds what a burst of operator requests can hold in memory.
constexpr size_t kMaxQueuedChanges = 100;

ClientResponse Failure(ClientResponse::Code code, std::string message) {
  ClientResponse response;
  response.set_code(code);
  response.set_message(std::move(message));
  return response;
}

TopologyChangeOp OpOf(const Entry& entry) {
  TopologyChangeOp op;
  for (const auto& [name, value] : EntryColumns(entry)) (*op.mutable_entry())[name] = value;
  return op;
}

absl::StatusOr<Entry> EntryOfOp(const TopologyChangeOp& op) {
  return EntryOfColumns(std::map<std::string, std::string>(op.entry().begin(), op.entry().end()));
}

}  // namespace

TopologyLogCopy CopyOf(const TopologyLog& log) {
  TopologyLogCopy copy;
  for (const Entry& entry : log.entries()) *copy.add_entries() = OpOf(entry);
  CHARYBDIS_ASSERT(static_cast<uint64_t>(copy.entries_size()) == log.sequence());
  return copy;
}

void AppendNewEntries(const TopologyLogCopy& copy, TopologyLog& log) {
  for (int i = static_cast<int>(log.sequence()); i < copy.entries_size(); i++) {
    absl::StatusOr<Entry> entry = EntryOfOp(copy.entries(i));
    CHARYBDIS_ASSERT(entry.ok());  // made by CopyOf from entries the agent parsed
    (void)log.Append(*std::move(entry));  // a refused entry is kept, as on shard 0
  }
}

TopologyAgent::TopologyAgent(ShardEnv env, TopologyLog& log, PaxosAmong paxos, Replications replications,
                             std::function<void()> on_change)
    : env_(env),
      log_(log),
      paxos_(std::move(paxos)),
      replications_(std::move(replications)),
      on_change_(std::move(on_change)) {
  CHARYBDIS_ASSERT(env.self.shard == 0);
  CHARYBDIS_ASSERT(replications_ != nullptr && on_change_ != nullptr);
}

void TopologyAgent::Start() {
  env_.storage->Get(kLocalKey, [this](auto stored) { OnLoaded(std::move(stored)); });
}

void TopologyAgent::OnLoaded(absl::StatusOr<std::optional<std::string>> stored) {
  CHARYBDIS_ASSERT(step_ == Step::kLoading);
  CHARYBDIS_ASSERT(log_.sequence() == 0);  // loaded once, before anything is read or proposed
  TopologyLogCopy saved;
  const std::optional<std::string_view> payload =
      stored.ok() && stored->has_value() ? checked_value::Open(kLocalKey, **stored) : std::nullopt;
  if (payload && saved.ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
    AppendNewEntries(saved, log_);  // sealed by this node, from entries it parsed
  } else if (!stored.ok() || stored->has_value()) {
    // A failed disk or a corrupt copy: the log is read back from the
    // participants of each entry, as a node that was down reads it.
    CHARYBDIS_PROBE(env_.probes, "topology.local_copy_lost");
    read_wanted_ = true;
  }
  step_ = Step::kIdle;
  on_change_();
  Next();
}

void TopologyAgent::Save(std::function<void()> then) {
  WriteBatch batch;
  batch.Put(kLocalKey, checked_value::Seal(kLocalKey, CopyOf(log_).SerializeAsString()));
  step_ = Step::kSaving;
  // A failed write is not retried: the log is decided by Paxos among the
  // owners, and a restart without the copy reads it back from them.
  env_.storage->Apply(std::move(batch), Durability::kSynced, [this, then = std::move(then)](absl::Status) {
    CHARYBDIS_ASSERT(step_ == Step::kSaving);
    step_ = Step::kIdle;
    then();
  });
}

void TopologyAgent::OnRequest(const Envelope& message) {
  const ClientRequest& request = message.client_request();
  CHARYBDIS_ASSERT(request.has_topology_change());
  Change change;
  change.client = ClientAddressOf(message);
  change.request_id = request.request_id();
  absl::StatusOr<Entry> entry = EntryOfOp(request.topology_change());
  if (!entry.ok()) {
    return Reply(change, Failure(ClientResponse::INVALID_REQUEST,
                                 absl::StrCat("not a topology change: ", entry.status().message())));
  }
  change.entry = *std::move(entry);
  if (changes_.size() >= kMaxQueuedChanges) {
    return Reply(change, Failure(ClientResponse::UNAVAILABLE, "too many topology changes are queued on this node"));
  }
  changes_.push_back(std::move(change));
  Next();
}

void TopologyAgent::Submit(Entry entry, std::function<void(ClientResponse)> answer) {
  CHARYBDIS_ASSERT(answer != nullptr);
  Change change;
  change.entry = std::move(entry);
  change.answer = std::move(answer);
  changes_.push_back(std::move(change));
  // Posted: Submit may be called while a round is being answered.
  env_.reactor->Post([this] { Next(); });
}

void TopologyAgent::OnPeerTopology(NodeId peer, uint64_t sequence) {
  CHARYBDIS_ASSERT(peer != env_.self.node);
  // A new node asking to join is no measure of the log.
  if (const Member* member = log_.topology().Find(peer); member != nullptr && member->state != NodeState::kLeft) {
    heard_member_ = true;
    newest_peer_sequence_ = std::max(newest_peer_sequence_, sequence);
  }
  // Buggify: as if this heartbeat's news were missed; the next one tells
  // again, and a change checked meanwhile loses its proposal. A node
  // reading by Paxos asks too: the next entry's participants may be gone
  // for good (a replacement after a decommission, scenarios/membership
  // seed 423: node 5 read entry after entry and failed for lack of live
  // replicas, and never asked its peers for their copy).
  if (sequence <= log_.sequence() || env_.buggify->Fires("topology.ignore_peer_ahead")) return;
  if (env_.clock->Now() - copy_asked_at_ < kCopyRequestInterval) return;
  CHARYBDIS_PROBE(env_.probes, "topology.behind_a_peer");
  if (read_wanted_) CHARYBDIS_PROBE(env_.probes, "topology.copy_asked_while_reading");
  // The peer's copy comes within a round trip; a Paxos read of the next
  // entry can wait out a timeout where a partition just healed. Should no
  // copy come (lost, or the peer restarting), read by Paxos.
  copy_asked_at_ = env_.clock->Now();
  Envelope request;
  request.mutable_topology_log_request();
  env_.network->Send(Address{peer, 0}, std::move(request));
  env_.clock->After(kCopyWait, [this, sequence] {
    if (log_.sequence() >= sequence || read_wanted_) return;
    read_wanted_ = true;
    Next();
  });
}

void TopologyAgent::OnLogRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_topology_log_request());
  if (step_ == Step::kLoading) return;  // nothing to tell yet; it asks again
  Envelope answer;
  *answer.mutable_topology_log() = CopyOf(log_);
  env_.network->Send(Address{message.from_node(), message.from_shard()}, std::move(answer));
}

void TopologyAgent::OnLogCopy(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_topology_log());
  if (message.topology_log().entries_size() <= offered_copy_.entries_size()) return;
  offered_copy_ = message.topology_log();
  Next();
}

bool TopologyAgent::TakeOfferedCopy() {
  CHARYBDIS_ASSERT(step_ == Step::kIdle);
  bool took = false;
  for (int i = static_cast<int>(log_.sequence()); i < offered_copy_.entries_size(); i++) {
    absl::StatusOr<Entry> entry = EntryOfOp(offered_copy_.entries(i));
    // A peer's copy is its log, which it parsed; one that does not parse
    // is a confused peer's, and this node reads by Paxos instead.
    if (!entry.ok()) break;
    CHARYBDIS_PROBE(env_.probes, "topology.entry_copied_from_peer");
    Append(*std::move(entry));
    took = true;
  }
  offered_copy_.Clear();
  return took;
}

void TopologyAgent::CatchUp() {
  if (read_wanted_) return;
  read_wanted_ = true;
  Next();
}

void TopologyAgent::Stamp(Heartbeat& heartbeat) const { heartbeat.set_topology_sequence(log_.sequence()); }

// One round at a time: reads while the log may be longer than what this
// node applied (a change checked against a stale topology would only lose
// its proposal), else the first queued change.
void TopologyAgent::Next() {
  while (step_ == Step::kIdle) {
    if (TakeOfferedCopy()) return Save([this] { Next(); });
    if (read_wanted_) return ReadNext();
    if (changes_.empty()) return;
    Propose(changes_.front());
  }
}

void TopologyAgent::ReadNext() {
  CHARYBDIS_ASSERT(read_wanted_);
  for (Change& change : changes_) change.checked_after_read = true;
  ReadOp read;
  read.set_table(kTopologyLogTable);
  read.set_partition_key(TopologyLogKey(log_.sequence() + 1));
  read.set_consistency(CL_SERIAL);
  step_ = Step::kReading;
  paxos_(log_.ParticipantsOfNext(), CasOp(), std::move(read), [this](ClientResponse response) { OnRead(response); });
}

void TopologyAgent::OnRead(const ClientResponse& response) {
  CHARYBDIS_ASSERT(step_ == Step::kReading);
  step_ = Step::kIdle;
  if (response.code() != ClientResponse::OK) {
    CHARYBDIS_PROBE(env_.probes, "topology.read_failed");
    FailQueued(response);
    return WaitThenGoOn();
  }
  // One row per instance: entry sequence() + 1, or none decided yet.
  CHARYBDIS_ASSERT(response.rows_size() <= 1);
  if (response.rows_size() == 0) {
    read_wanted_ = false;
    return Next();
  }
  std::map<std::string, std::string> columns;
  for (const ResultCell& cell : response.rows(0).cells()) columns[cell.column()] = cell.value();
  absl::StatusOr<Entry> entry = EntryOfColumns(columns);
  CHARYBDIS_ASSERT(entry.ok());  // only TopologyAgent::Propose writes the log's rows
  CHARYBDIS_PROBE(env_.probes, "topology.entry_read");
  Append(*std::move(entry));
  // read_wanted_ stays: the next instance may be decided too.
  Save([this] { Next(); });
}

void TopologyAgent::Propose(Change& change) {
  CHARYBDIS_ASSERT(step_ == Step::kIdle);
  CHARYBDIS_ASSERT(&change == &changes_.front());
  if (change.entry.kind == Entry::Kind::kBegin && change.entry.operation == Operation::kReplicate) {
    // A change of replication goes from what places its keyspace in the
    // topology it follows, not in the one it was asked in: a change that
    // finished meanwhile counts, though this node's schema may not hold its
    // ALTER yet (scenarios/replicate_class seed 86: a second ALTER, queued
    // behind the first, began from the keyspace's first replication, and a
    // replica the first one added served reads but took no writes).
    ReplicationMove& replicating = change.entry.replicating;
    replicating.from = PlacedByOf(log_.topology(), TableReplication{replicating.keyspace,
                                                                    replicating.keyspace_created_at, replicating.from})
                           .now;
  }
  const absl::Status refusal = Refusal(change.entry);
  if (!refusal.ok() && !change.checked_after_read) {
    // Refused here, perhaps only because this node is behind: read the
    // rest of the log, then check again (Next reads before it proposes).
    CHARYBDIS_PROBE(env_.probes, "topology.read_before_refusing");
    change.checked_after_read = true;
    read_wanted_ = true;
    return;
  }
  if (!refusal.ok()) {
    Reply(change, Failure(ClientResponse::INVALID_REQUEST, std::string(refusal.message())));
    changes_.pop_front();
    return;
  }
  CasOp cas;
  cas.set_serial_consistency(CL_SERIAL);
  cas.set_commit_consistency(CL_QUORUM);
  CasStatement* statement = cas.add_statement();
  statement->set_if_not_exists(true);
  WriteOp* write = statement->mutable_write();
  write->set_table(kTopologyLogTable);
  write->set_partition_key(TopologyLogKey(log_.sequence() + 1));
  for (const auto& [name, value] : EntryColumns(change.entry)) {
    ColumnValue* column = write->add_put();
    column->set_column(name);
    column->set_value(value);
  }
  step_ = Step::kProposing;
  paxos_(log_.ParticipantsOfNext(), std::move(cas), ReadOp(),
         [this](ClientResponse response) { OnProposed(response); });
}

absl::Status TopologyAgent::Refusal(const Entry& entry) const {
  const absl::StatusOr<Topology> after = log_.topology().Apply(entry);
  if (!after.ok()) return after.status();
  for (const auto& [whose, replication] : replications_()) {
    if (absl::Status placeable = CheckPlaceable(*after, PlacedByOf(*after, replication)); !placeable.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(placeable.message(), " (the replication of ", whose, ")"));
    }
  }
  return absl::OkStatus();
}

void TopologyAgent::OnProposed(const ClientResponse& response) {
  CHARYBDIS_ASSERT(step_ == Step::kProposing);
  CHARYBDIS_ASSERT(!changes_.empty());
  step_ = Step::kIdle;
  Change& change = changes_.front();
  if (response.code() == ClientResponse::OK && response.applied()) {
    Append(change.entry);
    PushCopy();
    // Acknowledged once this node keeps it too.
    return Save([this] {
      ClientResponse done;
      done.set_topology_sequence(log_.sequence());
      done.set_topology_version(log_.topology().version());
      Reply(changes_.front(), std::move(done));
      changes_.pop_front();
      Next();
    });
  }
  read_wanted_ = true;
  if (response.code() == ClientResponse::OK) {
    // Another node's entry took this number first: read it, check again.
    CHARYBDIS_PROBE(env_.probes, "topology.proposal_lost_race");
    if (++change.attempts < kMaxAttempts) return Next();
    ClientResponse contended = Failure(
        ClientResponse::WRITE_TIMEOUT, absl::StrCat("topology changes of other nodes won ", kMaxAttempts, " times in a row"));
    contended.set_consistency(CL_SERIAL);
    contended.set_write_type("CAS");
    Reply(change, std::move(contended));
  } else {
    // Unavailable, or a timeout that may have decided it: the next read
    // tells, and the operator's retry finds it done or refused.
    Reply(change, response);
  }
  changes_.pop_front();
  WaitThenGoOn();
}

// Every member learns a decided entry within a round trip rather than at
// its next heartbeat and read: a driver's operator may stop the node the
// moment the driver sees its operation finished, and with it the one
// member that knew the last entry among few enough live owners to read it
// (scenarios/membership: node 1 stopped as its decommission finished, node
// 3 dead, and no majority of the last version's owners to read it from).
void TopologyAgent::PushCopy() {
  Envelope copy;
  *copy.mutable_topology_log() = CopyOf(log_);
  for (const auto& [id, member] : log_.topology().members()) {
    if (id != env_.self.node && member.state != NodeState::kLeft) env_.network->Send(Address{id, 0}, copy);
  }
}

void TopologyAgent::Append(Entry entry) {
  const uint64_t before = log_.sequence();
  const absl::Status applied = log_.Append(std::move(entry));
  // Entry k is proposed only when it applies to the topology of entries
  // 1 to k - 1, which every node holding them holds alike.
  CHARYBDIS_ASSERT(applied.ok());
  CHARYBDIS_ASSERT(log_.sequence() == before + 1);
  on_change_();
}

void TopologyAgent::WaitThenGoOn() {
  CHARYBDIS_ASSERT(step_ == Step::kIdle);
  step_ = Step::kWaiting;
  env_.clock->After(kRetryDelay, [this] {
    CHARYBDIS_ASSERT(step_ == Step::kWaiting);
    step_ = Step::kIdle;
    Next();
  });
}

void TopologyAgent::FailQueued(const ClientResponse& why) {
  ClientResponse failure = why;
  failure.set_message(absl::StrCat("the topology log could not be read: ", why.message()));
  for (const Change& change : changes_) Reply(change, failure);
  changes_.clear();
}

void TopologyAgent::Reply(const Change& change, ClientResponse response) {
  if (change.answer) {
    // Posted: the driver may submit again from its answer.
    env_.reactor->Post([answer = change.answer, response = std::move(response)] { answer(response); });
    return;
  }
  response.set_request_id(change.request_id);
  Envelope message;
  *message.mutable_client_response() = std::move(response);
  env_.network->Send(change.client, std::move(message));
}

}  // namespace charybdis::topology
