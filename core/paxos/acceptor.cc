#include "core/paxos/acceptor.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/data/checked_value.h"
#include "core/data/storage_codec.h"
#include "core/paxos/ballot.h"
#include "core/paxos/row_spans.h"
#include "core/replica/stored_partition.h"

namespace charybdis {

namespace {

Address SenderOf(const Envelope& message) {
  return Address{message.from_node(), message.from_shard()};
}

// Enough to cover the commits one lock-step round of many contenders makes
// while a proposer whose value a minority accepted backs off.
constexpr int kRecentCommitOrigins = 32;

// Whether `origin` is among the recent commit origins, or provably not.
PaxosPromise::OriginFate FateOf(const PaxosState& state, const Ballot& origin) {
  const auto& recent = state.recent_commit_origins();
  for (const Ballot& committed : recent) {
    if (BallotEqual(committed, origin)) return PaxosPromise::ORIGIN_COMMITTED;
  }
  // The list drops its oldest first: it still covers `origin` while it has
  // room or its oldest entry is older.
  if (recent.size() < kRecentCommitOrigins || BallotLess(recent[0], origin)) {
    return PaxosPromise::ORIGIN_NOT_COMMITTED;
  }
  return PaxosPromise::ORIGIN_FORGOTTEN;
}

void RememberCommitOrigin(PaxosState& state, const Ballot& origin) {
  auto* recent = state.mutable_recent_commit_origins();
  int at = recent->size();
  while (at > 0 && BallotLess(origin, (*recent)[at - 1])) at--;
  if (at > 0 && BallotEqual((*recent)[at - 1], origin)) return;  // known already
  *recent->Add() = origin;
  for (int i = recent->size() - 1; i > at; i--) recent->SwapElements(i, i - 1);
  if (recent->size() > kRecentCommitOrigins) recent->DeleteSubrange(0, 1);
  CHARYBDIS_ASSERT(recent->size() <= kRecentCommitOrigins);
}

// What every change of a partition's durable state keeps: the promise
// never goes back, nothing is accepted above the promise, the commit only
// moves forward, and the recent commit origins stay sorted and bounded.
void AssertTransition(const PaxosState& before, const PaxosState& after) {
  CHARYBDIS_ASSERT(!BallotLess(after.promised(), before.promised()));
  if (after.has_accepted()) {
    CHARYBDIS_ASSERT(!BallotLess(after.promised(), after.accepted().ballot()));
  }
  if (before.has_committed()) {
    CHARYBDIS_ASSERT(after.has_committed());
    CHARYBDIS_ASSERT(!BallotLess(after.committed().ballot(), before.committed().ballot()));
  }
  if (after.has_committed() && after.committed().pruned()) {
    CHARYBDIS_ASSERT(after.committed().mutation().rows_size() == 0);
  }
  const auto& recent = after.recent_commit_origins();
  CHARYBDIS_ASSERT(recent.size() <= kRecentCommitOrigins);
  for (int i = 1; i < recent.size(); i++) CHARYBDIS_ASSERT(BallotLess(recent[i - 1], recent[i]));
}

bool HasUncommittedAccept(const PaxosState& state) {
  if (!state.has_accepted()) return false;
  return !state.has_committed() ||
         BallotLess(state.committed().ballot(), state.accepted().ballot());
}

// `state` with what `streamed` knows that it does not.
PaxosState Merged(const PaxosState& state, const PaxosState& streamed) {
  PaxosState merged = state;
  if (streamed.has_accepted() &&
      (!merged.has_accepted() || BallotLess(merged.accepted().ballot(), streamed.accepted().ballot()))) {
    *merged.mutable_accepted() = streamed.accepted();
  }
  if (streamed.has_committed() &&
      (!merged.has_committed() || BallotLess(merged.committed().ballot(), streamed.committed().ballot()))) {
    *merged.mutable_committed() = streamed.committed();
  }
  for (const Ballot& origin : streamed.recent_commit_origins()) RememberCommitOrigin(merged, origin);
  if (BallotLess(merged.promised(), streamed.promised())) *merged.mutable_promised() = streamed.promised();
  if (merged.has_accepted() && BallotLess(merged.promised(), merged.accepted().ballot())) {
    *merged.mutable_promised() = merged.accepted().ballot();
  }
  return merged;
}

}  // namespace

bool ParseStoredPaxosState(const std::string& key, const std::string& stored, PaxosState& state) {
  const std::optional<std::string_view> payload = checked_value::Open(key, stored);
  return payload && state.ParseFromArray(payload->data(), static_cast<int>(payload->size()));
}

Acceptor::Acceptor(ShardEnv env, ShardMetrics& metrics, size_t max_idle_partitions, RepairedSince repaired_since,
                   PurgeHorizon purge_horizon)
    : env_(env),
      metrics_(metrics),
      repaired_since_(std::move(repaired_since)),
      purge_horizon_(std::move(purge_horizon)),
      fences_(env),
      history_loaded_(repaired_since_ == nullptr),
      max_idle_partitions_(max_idle_partitions) {}

void Acceptor::Start() {
  LoadHorizon();
  const std::string all = storage_codec::PaxosPrefix();
  env_.storage->Scan(all, storage_codec::PrefixEnd(all), SIZE_MAX, [this](auto stored) {
    if (!stored.ok()) {
      env_.clock->After(kSecond, [this] { Start(); });
      return;
    }
    for (const KeyValue& entry : *stored) {
      // A partition already decided on in this life knows better.
      auto it = partitions_.find(entry.key);
      if (it != partitions_.end() && it->second.loaded) continue;
      PaxosState state;
      // Unreadable state may hide an accept: treat it as in progress, so
      // plain reads finish a round (which reads a quorum) before answering.
      if (!ParseStoredPaxosState(entry.key, entry.value, state)) {
        in_progress_[entry.key] = std::numeric_limits<int64_t>::max();
      } else if (HasUncommittedAccept(state)) {
        in_progress_[entry.key] = state.accepted().ballot().micros();
      }
    }
    started_ = true;
  });
}

void Acceptor::LoadHorizon() {
  // Start runs again when its scan fails: one read at a time, and the
  // first answer counts (raises and evictions may follow it).
  if (horizon_.loaded || horizon_.reading) return;
  horizon_.reading = true;
  // One scan for the horizon and the fences (docs/repair.md): the keys of
  // both begin with it.
  const std::string prefix = "system/paxos_";
  static_assert(std::string_view(kHorizonKeys[0]).starts_with("system/paxos_"));
  static_assert(std::string_view(PaxosFences::kKeyPrefix).starts_with("system/paxos_"));
  env_.storage->Scan(prefix, storage_codec::PrefixEnd(prefix), SIZE_MAX, [this](absl::StatusOr<std::vector<KeyValue>> scanned) {
    horizon_.reading = false;
    if (!scanned.ok()) {
      env_.clock->After(kSecond, [this] { LoadHorizon(); });
      return;
    }
    std::vector<KeyValue> fences;
    std::vector<KeyValue> stored;  // the horizon's copies
    for (KeyValue& entry : *scanned) {
      if (entry.key.starts_with(PaxosFences::kKeyPrefix)) {
        fences.push_back(std::move(entry));
      } else if (entry.key.starts_with(kHorizonKeys[0])) {
        stored.push_back(std::move(entry));
      }
    }
    fences_.Load(fences);
    // Never raised: every promise so far was synced. Both copies are
    // written in one batch; either one that checks out will do, and only
    // when neither does is no lower bound on the lost promises known: this
    // shard's acceptor then decides nothing (its proposers go to the other
    // replicas), as for a partition whose state is corrupt.
    int64_t micros = 0;
    bool readable = stored.empty();
    for (const KeyValue& copy : stored) {
      const std::optional<std::string_view> payload = checked_value::Open(copy.key, copy.value);
      int64_t value = 0;
      if (payload && absl::SimpleAtoi(absl::string_view(payload->data(), payload->size()), &value) && value >= 0) {
        micros = std::max(micros, value);
        readable = true;
      }
    }
    if (!readable) {
      CHARYBDIS_PROBE(env_.probes, "storage.corrupt_paxos_horizon");
      horizon_.corrupt = true;
    }
    horizon_.loaded = true;
    horizon_.durable_micros = micros;
    horizon_.written_micros = micros;
    // Every promise of the previous life was below `micros`.
    floor_.set_micros(micros);
    floor_.set_unique(0);
    RunWaiting();
  });
}

void Acceptor::OnRepairHistoryLoaded() {
  history_loaded_ = true;
  RunWaiting();
}

void Acceptor::RunWaiting() {
  if (!Ready()) return;
  std::vector<std::string> waiting;
  for (const auto& [key, entry] : partitions_) {
    if (!entry.waiting.empty()) waiting.push_back(key);
  }
  for (const std::string& key : waiting) RunNext(key);
}

Ballot Acceptor::AtLeastFence(const std::string& table, const std::string& partition_key,
                              const Ballot& promised) const {
  Ballot fence;
  fence.set_micros(fences_.FenceOf(table, TokenOf(partition_key)));
  if (!BallotLess(promised, fence)) return promised;
  CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.fenced_by_repair");
  return fence;
}

int64_t Acceptor::PurgeFloorOf(const std::string& table, const std::string& partition_key) const {
  if (repaired_since_ == nullptr || !fences_.loaded()) return 0;
  CHARYBDIS_ASSERT(history_loaded_);  // no decision, and nothing in progress, before
  // A repair's history entry is written once its fence held on every
  // replica and its rounds were finished; the fence bounds it all the same.
  const Token token = TokenOf(partition_key);
  return std::min(repaired_since_(table, token), fences_.FenceOf(table, token));
}

void Acceptor::PlanPromise(const Ballot& ballot, Decision& decision) {
  CHARYBDIS_ASSERT(horizon_.loaded);
  CHARYBDIS_ASSERT(!horizon_.corrupt);
  CHARYBDIS_ASSERT(horizon_.written_micros >= horizon_.durable_micros);
  if (ballot.micros() < horizon_.durable_micros - kHorizonRaiseMicros) {
    decision.in_memory = true;
    return;
  }
  // A ballot from a clock far ahead is promised synced, on its own: raised
  // to it, the horizon would make every partition of the shard refuse
  // ballots up to it after a restart, not only the ones it touched.
  const int64_t now_micros = env_.clock->Now() / kMicrosecond;
  if (ballot.micros() > now_micros + kHorizonMaxLeadMicros) return;
  CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.raise_horizon");
  const int64_t raised = std::max(horizon_.written_micros, ballot.micros() + kHorizonWindowMicros);
  CHARYBDIS_ASSERT(raised > ballot.micros());
  horizon_.written_micros = raised;
  for (const char* key : kHorizonKeys) decision.extra.Put(key, checked_value::Seal(key, std::to_string(raised)));
  decision.written = [this, raised](bool ok) {
    if (ok) horizon_.durable_micros = std::max(horizon_.durable_micros, raised);
  };
}

bool Acceptor::InProgress(const std::string& table, const std::string& partition_key) const {
  if (!started_ || !Ready()) return true;
  auto it = in_progress_.find(storage_codec::PaxosKey(table, partition_key));
  return it != in_progress_.end() && it->second >= PurgeFloorOf(table, partition_key);
}

void Acceptor::NoteProgress(const std::string& key, const PaxosState& state) {
  if (HasUncommittedAccept(state)) {
    in_progress_[key] = state.accepted().ballot().micros();
  } else {
    in_progress_.erase(key);
  }
}

void Acceptor::Submit(const std::string& key, Decide decide) {
  Use(key).waiting.push_back(std::move(decide));
  RunNext(key);
}

Acceptor::Entry& Acceptor::Use(const std::string& key) {
  Entry& entry = partitions_[key];
  if (entry.idle) {
    idle_.erase(*entry.idle);
    entry.idle.reset();
  }
  return entry;
}

void Acceptor::MaybeIdle(const std::string& key) {
  auto it = partitions_.find(key);
  CHARYBDIS_ASSERT(it != partitions_.end());
  Entry& entry = it->second;
  if (entry.busy || entry.loading || !entry.waiting.empty()) return;
  CHARYBDIS_ASSERT(!entry.idle);
  idle_.push_front(key);
  entry.idle = idle_.begin();
  // Buggified, the cache keeps nothing idle: every message reloads the
  // durable state, which must be all a decision needs.
  const size_t bound =
      env_.buggify->Fires("paxos.acceptor.evict_idle_at_once") ? 0 : max_idle_partitions_;
  while (idle_.size() > bound) {
    auto victim = partitions_.find(idle_.back());
    CHARYBDIS_ASSERT(victim != partitions_.end());
    CHARYBDIS_ASSERT(victim->second.idle);
    CHARYBDIS_ASSERT(!victim->second.busy);
    CHARYBDIS_ASSERT(!victim->second.loading);
    CHARYBDIS_ASSERT(victim->second.waiting.empty());
    CHARYBDIS_ASSERT(!victim->second.busy && !victim->second.loading && victim->second.waiting.empty());
    idle_.pop_back();
    const PaxosState& dropped = victim->second.state;
    if (victim->second.promise_in_memory && BallotLess(floor_, dropped.promised())) floor_ = dropped.promised();
    partitions_.erase(victim);
    metrics_.paxos_cache_evictions++;
  }
  CHARYBDIS_ASSERT(idle_.size() <= partitions_.size());
}

void Acceptor::Load(const std::string& key) {
  Entry& entry = partitions_[key];
  // RunNext loads a partition once, and only one not loaded yet.
  CHARYBDIS_ASSERT(!entry.loading);
  CHARYBDIS_ASSERT(!entry.loaded);
  entry.loading = true;
  env_.storage->Get(key, [this, key](absl::StatusOr<std::optional<std::string>> stored) {
    Entry& loading = partitions_[key];
    CHARYBDIS_ASSERT(loading.loading);  // MaybeIdle keeps a loading partition
    loading.loading = false;
    // No decision without the durable state, nor on state that does not
    // parse (data loss: promising anything could break an earlier
    // promise): drop the requests (their proposers time out and go to
    // other replicas); the next one loads again.
    const bool corrupt = stored.ok() && stored->has_value() && !ParseStoredPaxosState(key, **stored, loading.state);
    if (corrupt) CHARYBDIS_PROBE(env_.probes, "storage.corrupt_paxos_state");
    if (!stored.ok() || corrupt) {
      loading.state.Clear();
      loading.waiting.clear();
      MaybeIdle(key);
      return;
    }
    if (BallotLess(loading.state.promised(), floor_)) *loading.state.mutable_promised() = floor_;
    loading.loaded = true;
    RunNext(key);
  });
}

void Acceptor::RunNext(const std::string& key) {
  // RunWaiting runs every waiting partition.
  if (!Ready()) return;
  Entry& entry = partitions_[key];
  if (horizon_.corrupt) entry.waiting.clear();  // decides nothing (LoadHorizon)
  while (!entry.waiting.empty() && !entry.busy) {
    if (!entry.loaded) {
      if (!entry.loading) Load(key);
      return;
    }
    Decide decide = std::move(entry.waiting.front());
    entry.waiting.pop_front();
    Decision decision = decide(entry.state);
    if (!decision.next) {
      if (decision.written) decision.written(true);
      Send(std::move(decision.answer), true);
      continue;
    }
    if (decision.erase) {
      CHARYBDIS_ASSERT(!decision.in_memory && decision.extra.operations.empty());
    } else {
      AssertTransition(entry.state, *decision.next);
    }
    if (decision.in_memory) {
      KeepInMemory(entry, key, decision);
      continue;
    }
    entry.busy = true;
    WriteBatch batch = std::move(decision.extra);
    if (decision.erase) {
      batch.Delete(key);
    } else {
      batch.Put(key, checked_value::Seal(key, decision.next->SerializeAsString()));
    }
    env_.storage->Apply(std::move(batch), decision.durability,
                        [this, key, erase = decision.erase, next = std::move(*decision.next),
                         written = std::move(decision.written),
                         answer = std::move(decision.answer)](absl::Status status) mutable {
                          Entry& done = partitions_[key];
                          CHARYBDIS_ASSERT(done.busy);  // one decision at a time
                          CHARYBDIS_ASSERT(done.loaded);
                          done.busy = false;
                          if (written) written(status.ok());
                          if (status.ok()) {
                            done.state = next;
                            // A purged state is as a load of the missing key gives.
                            if (erase && BallotLess(done.state.promised(), floor_)) {
                              *done.state.mutable_promised() = floor_;
                            }
                            done.promise_in_memory = false;
                            NoteProgress(key, next);
                          }
                          Send(std::move(answer), status.ok());
                          RunNext(key);
                        });
    return;
  }
  MaybeIdle(key);  // may drop `entry`
}

void Acceptor::KeepInMemory(Entry& entry, const std::string& key, Decision& decision) {
  // Only a promise, and only one the synced horizon covers: what a crash
  // takes of it, the next life's floor forbids again.
  CHARYBDIS_ASSERT(decision.extra.operations.empty());
  CHARYBDIS_ASSERT(!decision.written);
  CHARYBDIS_ASSERT(decision.next->promised().micros() < horizon_.durable_micros);
  CHARYBDIS_ASSERT(HasUncommittedAccept(*decision.next) == HasUncommittedAccept(entry.state));
  entry.state = std::move(*decision.next);
  entry.promise_in_memory = true;
  NoteProgress(key, entry.state);
  Send(std::move(decision.answer), true);
}

void Acceptor::Send(Answer answer, bool durable) {
  switch (answer.kind) {
    case Answer::Kind::kNone:
      return;
    case Answer::Kind::kRefusedPromise:
      CHARYBDIS_ASSERT(answer.message.has_paxos_promise());
      return env_.network->Send(answer.to, std::move(answer.message));
    case Answer::Kind::kPromise:
      CHARYBDIS_ASSERT(answer.message.paxos_promise().promised());
      return SendPromise(std::move(answer), durable);
    case Answer::Kind::kAcceptReply:
      answer.message.mutable_paxos_accept_reply()->set_ok(durable);
      return SendPerhapsTwice(env_, "paxos.acceptor.accept_reply_duplicate", answer.to, std::move(answer.message));
    case Answer::Kind::kCommitAck:
      if (durable) metrics_.database_total_writes++;
      answer.message.mutable_paxos_commit_ack()->set_ok(durable);
      return SendPerhapsLate(env_, "paxos.acceptor.commit_ack_late", answer.to, std::move(answer.message));
  }
}

void Acceptor::SendPromise(Answer answer, bool durable) {
  auto reply = std::make_shared<Envelope>(std::move(answer.message));
  const Address to = answer.to;
  if (!durable) {
    reply->mutable_paxos_promise()->set_ok(false);
    return env_.network->Send(to, std::move(*reply));
  }
  // The read folded into the prepare: the rows it names (or the
  // partition) as the table holds them, purged of what may go, so that a
  // proposer's repair of a replica never writes a purgeable tombstone back.
  const Timestamp purge_before =
      purge_horizon_ ? purge_horizon_(answer.prepare.table(), TokenOf(answer.prepare.partition_key()))
                     : std::numeric_limits<Timestamp>::min();
  ReadForPrepare(answer.prepare, [this, to, reply, purge_before](absl::StatusOr<std::vector<KeyValue>> stored) {
    absl::StatusOr<Partition> data = ServablePartition(env_, metrics_, std::move(stored), purge_before);
    PaxosPromise* promise = reply->mutable_paxos_promise();
    if (data.ok()) {
      data->ToProto(promise->mutable_data());
    } else {
      promise->set_ok(false);
    }
    SendPerhapsLate(env_, "paxos.acceptor.promise_late", to, std::move(*reply));
  });
}

void Acceptor::ReadForPrepare(const PaxosPrepare& prepare, Storage::ScanDone done) {
  const std::string partition = storage_codec::PartitionPrefix(prepare.table(), prepare.partition_key());
  std::vector<std::pair<std::string, std::string>> ranges;
  // Spans backwards, out of order or overlapping, which no proposer of ours
  // sends, read the whole partition.
  if (IsSortedAndDisjoint(prepare.read_rows())) {
    for (const RowSpan& span : prepare.read_rows()) {
      ranges.emplace_back(storage_codec::RowPrefix(prepare.table(), prepare.partition_key(), span.first()),
                          storage_codec::PrefixEnd(storage_codec::RowPrefix(
                              prepare.table(), prepare.partition_key(), span.last())));
    }
  }
  if (ranges.empty()) {
    // The range tombstones sort first: the whole partition is one scan.
    env_.storage->Scan(partition, storage_codec::PrefixEnd(partition), SIZE_MAX, std::move(done));
    return;
  }
  ScanPartitionRows(*env_.storage, prepare.table(), prepare.partition_key(), std::move(ranges), std::move(done));
}

void Acceptor::OnPrepare(const Envelope& message) {
  const PaxosPrepare prepare = message.paxos_prepare();
  const Address sender = SenderOf(message);
  const std::string key = storage_codec::PaxosKey(prepare.table(), prepare.partition_key());
  Submit(key, [this, prepare, sender](const PaxosState& state) {
    Decision decision;
    decision.answer.to = sender;
    PaxosPromise* promise = decision.answer.message.mutable_paxos_promise();
    promise->set_request_id(prepare.request_id());
    promise->set_ok(true);
    // An equal ballot is the same proposer asking again (a duplicate).
    const Ballot floor = AtLeastFence(prepare.table(), prepare.partition_key(), state.promised());
    if (BallotLess(prepare.ballot(), floor)) {
      CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.refuse_prepare");
      promise->set_promised(false);
      *promise->mutable_promised_ballot() = floor;
      decision.answer.kind = Answer::Kind::kRefusedPromise;
      return decision;
    }
    PaxosState next = state;
    *next.mutable_promised() = prepare.ballot();
    promise->set_promised(true);
    *promise->mutable_promised_ballot() = next.promised();
    // Below the purge floor the state is as if purged (replicas that
    // purged theirs report nothing): a proposal there was finished by a
    // repair or never will be, and a commit there is in every replica's
    // table. Reported, either could be written again after what deleted
    // it went.
    const int64_t purge_floor = PurgeFloorOf(prepare.table(), prepare.partition_key());
    if (next.has_accepted() && next.accepted().ballot().micros() < purge_floor) {
      CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.ignore_repaired_accept");
    } else if (next.has_accepted()) {
      *promise->mutable_accepted() = next.accepted();
    }
    if (next.has_committed() && next.committed().ballot().micros() >= purge_floor) {
      *promise->mutable_committed() = next.committed();
    }
    if (prepare.has_uncertain_origin()) {
      // A purge forgot the origins it held.
      promise->set_origin_fate(prepare.uncertain_origin().micros() < purge_floor
                                   ? PaxosPromise::ORIGIN_FORGOTTEN
                                   : FateOf(next, prepare.uncertain_origin()));
    }
    decision.next = std::move(next);
    PlanPromise(prepare.ballot(), decision);
    decision.answer.kind = Answer::Kind::kPromise;
    decision.answer.prepare = prepare;
    return decision;
  });
}

void Acceptor::OnAccept(const Envelope& message) {
  const PaxosAccept accept = message.paxos_accept();
  const Address sender = SenderOf(message);
  const PartitionData& mutation = accept.proposal().mutation();
  const std::string key = storage_codec::PaxosKey(mutation.table(), mutation.partition_key());
  Submit(key, [this, accept, sender](const PaxosState& state) {
    Decision decision;
    decision.answer.kind = Answer::Kind::kAcceptReply;
    decision.answer.to = sender;
    PaxosAcceptReply* answer = decision.answer.message.mutable_paxos_accept_reply();
    answer->set_request_id(accept.request_id());
    const PartitionData& mutation = accept.proposal().mutation();
    const Ballot floor = AtLeastFence(mutation.table(), mutation.partition_key(), state.promised());
    if (BallotLess(accept.proposal().ballot(), floor)) {
      CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.refuse_accept");
      answer->set_ok(true);
      answer->set_accepted(false);
      *answer->mutable_promised_ballot() = floor;
    } else {
      PaxosState next = state;
      *next.mutable_promised() = accept.proposal().ballot();
      *next.mutable_accepted() = accept.proposal();
      decision.next = std::move(next);
      answer->set_accepted(true);
    }
    return decision;
  });
}

void Acceptor::OnCommit(const Envelope& message) {
  const PaxosCommit commit = message.paxos_commit();
  const Address sender = SenderOf(message);
  const PartitionData& mutation = commit.proposal().mutation();
  const std::string key = storage_codec::PaxosKey(mutation.table(), mutation.partition_key());
  Submit(key, [this, commit, sender](const PaxosState& state) {
    const Proposal& proposal = commit.proposal();
    PaxosState next = state;
    if (!next.has_committed() || BallotLess(next.committed().ballot(), proposal.ballot())) {
      *next.mutable_committed() = proposal;
      // A repair of a pruned commit carries only what this replica lacked.
      if (proposal.pruned()) next.mutable_committed()->clear_mutation();
    }
    CHARYBDIS_ASSERT(next.has_committed());
    CHARYBDIS_ASSERT(!BallotLess(next.committed().ballot(), proposal.ballot()));
    RememberCommitOrigin(next, proposal.has_origin() ? proposal.origin() : proposal.ballot());
    if (next.has_accepted() && !BallotLess(next.committed().ballot(), next.accepted().ballot())) {
      next.clear_accepted();  // decided: no longer in progress
    }
    Decision decision;
    decision.next = std::move(next);
    // The table and the Paxos state change together, in one synced write.
    // A commit below the purge floor arrives late (every replica's table
    // has it): what it carries from before the purge horizon may have been
    // deleted and purged here, as a hint's may (replica.cc).
    Partition mutation = Partition::FromProto(proposal.mutation());
    const std::string& table = proposal.mutation().table();
    const std::string& partition_key = proposal.mutation().partition_key();
    if (purge_horizon_ && proposal.ballot().micros() < PurgeFloorOf(table, partition_key) &&
        DropOlderThan(mutation, purge_horizon_(table, TokenOf(partition_key)))) {
      CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.late_commit_past_horizon");
    }
    storage_codec::AddMutation(table, partition_key, mutation, decision.extra);
    decision.answer.kind = Answer::Kind::kCommitAck;
    decision.answer.to = sender;
    decision.answer.message.mutable_paxos_commit_ack()->set_request_id(commit.request_id());
    return decision;
  });
}

void Acceptor::OnPrune(const Envelope& message) {
  const PaxosPrune prune = message.paxos_prune();
  const std::string key = storage_codec::PaxosKey(prune.table(), prune.partition_key());
  Submit(key, [prune](const PaxosState& state) {
    Decision decision;  // a prune answers nothing
    // Only a commit the proposer saw durable on a quorum; a newer one may
    // not be yet, and its mutation may still be needed to repair others.
    if (!state.has_committed() || state.committed().pruned() ||
        BallotLess(prune.ballot(), state.committed().ballot())) {
      return decision;
    }
    PaxosState next = state;
    next.mutable_committed()->clear_mutation();
    next.mutable_committed()->set_pruned(true);
    decision.next = std::move(next);
    decision.durability = Durability::kUnsynced;
    return decision;
  });
}

void Acceptor::OnFence(const Envelope& message) {
  // Unfinished proposals are known once the states are scanned.
  if (!started_ || !Ready()) {
    env_.clock->After(100 * kMillisecond, [this, message] { OnFence(message); });
    return;
  }
  const PaxosFence fence = message.paxos_fence();
  fences_.Raise(fence.table(), fence.first_token(), fence.last_token(), fence.fence_us(),
                [this, fence, sender = SenderOf(message)](absl::Status status) {
                  Envelope reply;
                  PaxosFenced& fenced = *reply.mutable_paxos_fenced();
                  fenced.set_request_id(fence.request_id());
                  fenced.set_ok(status.ok());
                  if (status.ok()) {
                    CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.fence_raised");
                    for (std::string& partition_key : UnfinishedIn(fence)) {
                      fenced.add_unfinished_partition_keys(std::move(partition_key));
                    }
                  }
                  env_.network->Send(sender, std::move(reply));
                });
}

std::optional<std::vector<std::string>> Acceptor::InProgressIn(const std::string& table, Token first,
                                                                Token last) const {
  // Before the states are loaded, as InProgress answers "maybe" for one.
  if (!started_ || !Ready()) return std::nullopt;
  return InProgressAmong(table, first, last);
}

std::vector<std::string> Acceptor::InProgressAmong(const std::string& table, Token first, Token last) const {
  std::vector<std::string> in_progress;
  const std::string prefix = storage_codec::PaxosTablePrefix(table);
  for (auto it = in_progress_.lower_bound(prefix); it != in_progress_.end() && it->first.starts_with(prefix); ++it) {
    std::optional<std::string> partition_key = storage_codec::PartitionOfPaxosKey(it->first, table);
    if (!partition_key) continue;
    const Token token = TokenOf(*partition_key);
    if (token < first || token > last || it->second < PurgeFloorOf(table, *partition_key)) continue;
    in_progress.push_back(std::move(*partition_key));
  }
  return in_progress;
}

std::vector<std::string> Acceptor::UnfinishedIn(const PaxosFence& fence) const {
  std::vector<std::string> unfinished = InProgressAmong(fence.table(), fence.first_token(), fence.last_token());
  // A decision whose write is in flight was made before the fence held:
  // it may be an accept below it.
  const std::string prefix = storage_codec::PaxosTablePrefix(fence.table());
  for (auto it = partitions_.lower_bound(prefix); it != partitions_.end() && it->first.starts_with(prefix); ++it) {
    if (!it->second.busy || in_progress_.count(it->first) > 0) continue;
    std::optional<std::string> partition_key = storage_codec::PartitionOfPaxosKey(it->first, fence.table());
    if (!partition_key) continue;
    const Token token = TokenOf(*partition_key);
    if (token >= fence.first_token() && token <= fence.last_token()) unfinished.push_back(std::move(*partition_key));
  }
  return unfinished;
}

void Acceptor::Purge(const std::string& table, const std::string& partition_key, std::function<void(bool)> done) {
  const std::string key = storage_codec::PaxosKey(table, partition_key);
  Submit(key, [this, table, partition_key, done = std::move(done)](const PaxosState& state) mutable {
    Decision decision;  // answers no proposer
    if (PurgedState(state, PurgeFloorOf(table, partition_key)).has_value()) {
      decision.written = [done = std::move(done)](bool) { done(false); };
      return decision;
    }
    // The fence refuses every ballot the state could still answer for.
    CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.state_purged");
    decision.next = PaxosState();
    decision.erase = true;
    // Lost in a crash, the state comes back below the floor: ignored.
    decision.durability = Durability::kUnsynced;
    decision.written = [this, done = std::move(done)](bool ok) {
      if (ok) metrics_.paxos_states_purged++;
      done(ok);
    };
    return decision;
  });
}

std::optional<std::string> Acceptor::StreamedView(const std::string& table, const std::string& key,
                                                  const std::string& stored) const {
  CHARYBDIS_ASSERT(Ready());
  const std::optional<std::string> partition_key = storage_codec::PartitionOfPaxosKey(key, table);
  PaxosState state;
  if (!partition_key || !ParseStoredPaxosState(key, stored, state)) return stored;
  const std::optional<PaxosState> purged = PurgedState(std::move(state), PurgeFloorOf(table, *partition_key));
  if (!purged) return std::nullopt;
  return checked_value::Seal(key, purged->SerializeAsString());
}

std::optional<PaxosState> Acceptor::PurgedState(PaxosState state, int64_t floor) {
  const auto below = [floor](const Ballot& ballot) { return ballot.micros() < floor; };
  if (state.has_accepted() && below(state.accepted().ballot())) state.clear_accepted();
  if (state.has_committed() && below(state.committed().ballot())) state.clear_committed();
  if (below(state.promised()) && !state.has_accepted() && !state.has_committed()) return std::nullopt;
  return state;
}

void Acceptor::MergeStreamed(const std::string& key, const std::string& stored,
                             std::function<void(absl::Status)> done) {
  PaxosState streamed;
  if (!ParseStoredPaxosState(key, stored, streamed)) {
    return done(absl::DataLossError("a streamed Paxos state does not parse"));
  }
  Submit(key, [this, streamed = std::move(streamed), done = std::move(done)](const PaxosState& state) mutable {
    Decision decision;  // answers no proposer
    PaxosState next = Merged(state, streamed);
    if (next.SerializeAsString() == state.SerializeAsString()) {
      // Nothing new: known already (this life or a merge before a crash).
      env_.reactor->Post([done = std::move(done)] { done(absl::OkStatus()); });
      return decision;
    }
    CHARYBDIS_PROBE(env_.probes, "paxos.acceptor.merge_streamed");
    decision.next = std::move(next);
    decision.written = [done = std::move(done)](bool ok) {
      done(ok ? absl::OkStatus() : absl::UnavailableError("the disk refused a streamed Paxos state"));
    };
    return decision;
  });
}

}  // namespace charybdis
