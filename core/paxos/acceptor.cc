#include "core/paxos/acceptor.h"

#include "core/assert.h"
#include "core/data/storage_codec.h"
#include "core/paxos/ballot.h"

namespace charybdis {

namespace {

Address SenderOf(const Envelope& message) {
  return Address{message.from_node(), message.from_shard()};
}

bool HasUncommittedAccept(const PaxosState& state) {
  if (!state.has_accepted()) return false;
  return !state.has_committed() ||
         BallotLess(state.committed().ballot(), state.accepted().ballot());
}

}  // namespace

Acceptor::Acceptor(ShardEnv env, ShardMetrics& metrics) : env_(env), metrics_(metrics) {}

void Acceptor::Start() {
  const std::string all = storage_codec::PaxosPrefix();
  env_.storage->Scan(all, storage_codec::PrefixEnd(all), SIZE_MAX, [this](auto stored) {
    if (!stored.ok()) {
      env_.clock->After(kSecond, [this] { Start(); });
      return;
    }
    for (const KeyValue& entry : *stored) {
      PaxosState state;
      CHARYBDIS_ASSERT(state.ParseFromString(entry.value));
      if (HasUncommittedAccept(state)) in_progress_.insert(entry.key);
    }
    started_ = true;
  });
}

bool Acceptor::InProgress(const std::string& table, const std::string& partition_key) const {
  return !started_ || in_progress_.count(storage_codec::PaxosKey(table, partition_key)) > 0;
}

void Acceptor::NoteProgress(const std::string& key, const PaxosState& state) {
  if (HasUncommittedAccept(state)) {
    in_progress_.insert(key);
  } else {
    in_progress_.erase(key);
  }
}

void Acceptor::WithState(const std::string& key, std::function<void(PaxosState&)> decide) {
  Entry& entry = partitions_[key];
  if (entry.loaded) {
    decide(entry.state);
    return;
  }
  entry.waiting.push_back(std::move(decide));
  if (entry.waiting.size() > 1) return;  // a load is already under way
  env_.storage->Get(key, [this, key](absl::StatusOr<std::optional<std::string>> stored) {
    Entry& loading = partitions_[key];
    if (!stored.ok()) {
      // No decision without the durable state: drop the requests (their
      // proposers time out), and load again next time.
      loading.waiting.clear();
      return;
    }
    if (stored->has_value()) CHARYBDIS_ASSERT(loading.state.ParseFromString(**stored));
    loading.loaded = true;
    auto waiting = std::move(loading.waiting);
    for (auto& decide : waiting) decide(loading.state);
  });
}

void Acceptor::Persist(const std::string& key, const PaxosState& state, WriteBatch extra,
                       std::function<void(bool)> then) {
  extra.Put(key, state.SerializeAsString());
  env_.storage->Apply(std::move(extra), Durability::kSynced,
                      [then = std::move(then)](absl::Status status) { then(status.ok()); });
}

void Acceptor::OnPrepare(const Envelope& message) {
  const PaxosPrepare prepare = message.paxos_prepare();
  const Address sender = SenderOf(message);
  const std::string key = storage_codec::PaxosKey(prepare.table(), prepare.partition_key());
  WithState(key, [this, prepare, sender, key](PaxosState& state) {
    auto reply = std::make_shared<Envelope>();
    PaxosPromise* promise = reply->mutable_paxos_promise();
    promise->set_request_id(prepare.request_id());
    promise->set_ok(true);
    // An equal ballot is the same proposer asking again (a duplicate).
    if (BallotLess(prepare.ballot(), state.promised())) {
      promise->set_promised(false);
      *promise->mutable_promised_ballot() = state.promised();
      env_.network->Send(sender, std::move(*reply));
      return;
    }
    *state.mutable_promised() = prepare.ballot();
    promise->set_promised(true);
    *promise->mutable_promised_ballot() = state.promised();
    if (state.has_accepted()) *promise->mutable_accepted() = state.accepted();
    if (state.has_committed()) *promise->mutable_committed() = state.committed();
    Persist(key, state, WriteBatch(), [this, prepare, sender, reply](bool ok) {
      if (!ok) {
        reply->mutable_paxos_promise()->set_ok(false);
        env_.network->Send(sender, std::move(*reply));
        return;
      }
      // The read folded into the prepare: the partition as the table holds it.
      const std::string prefix = storage_codec::PartitionPrefix(prepare.table(), prepare.partition_key());
      env_.storage->Scan(prefix, storage_codec::PrefixEnd(prefix), SIZE_MAX,
                         [this, prepare, sender, reply](absl::StatusOr<std::vector<KeyValue>> stored) {
                           absl::StatusOr<storage_codec::Decoded> data =
                               stored.ok() ? storage_codec::DecodeScan(*stored)
                                           : absl::StatusOr<storage_codec::Decoded>(stored.status());
                           PaxosPromise* promise = reply->mutable_paxos_promise();
                           if (data.ok()) {
                             metrics_.database_total_reads++;
                             data->partition.ToProto(promise->mutable_data());
                             storage_codec::DeleteObsolete(*env_.storage, data->obsolete_keys);
                           } else {
                             promise->set_ok(false);
                           }
                           env_.network->Send(sender, std::move(*reply));
                         });
    });
  });
}

void Acceptor::OnAccept(const Envelope& message) {
  const PaxosAccept accept = message.paxos_accept();
  const Address sender = SenderOf(message);
  const PartitionData& mutation = accept.proposal().mutation();
  const std::string key = storage_codec::PaxosKey(mutation.table(), mutation.partition_key());
  WithState(key, [this, accept, sender, key](PaxosState& state) {
    Envelope reply;
    PaxosAcceptReply* answer = reply.mutable_paxos_accept_reply();
    answer->set_request_id(accept.request_id());
    answer->set_ok(true);
    if (BallotLess(accept.proposal().ballot(), state.promised())) {
      answer->set_accepted(false);
      *answer->mutable_promised_ballot() = state.promised();
      env_.network->Send(sender, std::move(reply));
      return;
    }
    *state.mutable_promised() = accept.proposal().ballot();
    *state.mutable_accepted() = accept.proposal();
    NoteProgress(key, state);
    answer->set_accepted(true);
    Persist(key, state, WriteBatch(), [this, sender, reply](bool ok) mutable {
      reply.mutable_paxos_accept_reply()->set_ok(ok);
      env_.network->Send(sender, std::move(reply));
    });
  });
}

void Acceptor::OnCommit(const Envelope& message) {
  const PaxosCommit commit = message.paxos_commit();
  const Address sender = SenderOf(message);
  const PartitionData& mutation = commit.proposal().mutation();
  const std::string key = storage_codec::PaxosKey(mutation.table(), mutation.partition_key());
  WithState(key, [this, commit, sender, key](PaxosState& state) {
    const Proposal& proposal = commit.proposal();
    if (!state.has_committed() || BallotLess(state.committed().ballot(), proposal.ballot())) {
      *state.mutable_committed() = proposal;
    }
    if (state.has_accepted() && !BallotLess(state.committed().ballot(), state.accepted().ballot())) {
      state.clear_accepted();  // decided: no longer in progress
    }
    NoteProgress(key, state);
    // The table and the Paxos state change together, in one synced write.
    WriteBatch batch;
    storage_codec::AddMutation(proposal.mutation().table(), proposal.mutation().partition_key(),
                               Partition::FromProto(proposal.mutation()), batch);
    const uint64_t request_id = commit.request_id();
    Persist(key, state, std::move(batch), [this, sender, request_id](bool ok) {
      if (ok) metrics_.database_total_writes++;
      Envelope reply;
      reply.mutable_paxos_commit_ack()->set_request_id(request_id);
      reply.mutable_paxos_commit_ack()->set_ok(ok);
      env_.network->Send(sender, std::move(reply));
    });
  });
}

}  // namespace charybdis
