#include "core/topology/barrier_answerer.h"

#include <algorithm>
#include <utility>

#include "core/env/assert.h"
#include "core/env/probe.h"

namespace charybdis::topology {

namespace {

void SendDone(ShardEnv& env, const Address& to, uint64_t request_id, uint64_t version) {
  Envelope reply;
  reply.mutable_topology_barrier_done()->set_request_id(request_id);
  reply.mutable_topology_barrier_done()->set_version(version);
  env.network->Send(to, std::move(reply));
}

}  // namespace

BarrierAnswerer::BarrierAnswerer(ShardEnv env, uint32_t shards, const TopologyLog& log, Nanos drain,
                                 uint64_t& fence, std::function<void()> catch_up)
    : env_(env), shards_(shards), log_(log), drain_(drain), fence_(fence), catch_up_(std::move(catch_up)) {
  CHARYBDIS_ASSERT(shards_ >= 1 && env_.self.shard < shards_);
  CHARYBDIS_ASSERT(drain_ >= 0);
  CHARYBDIS_ASSERT((env_.self.shard == 0) == (catch_up_ != nullptr));
}

void BarrierAnswerer::OnBarrier(const Envelope& message) {
  const TopologyBarrier& barrier = message.topology_barrier();
  if (env_.self.shard != 0) {
    // Shard 0 of this node asks.
    CHARYBDIS_ASSERT(message.from_node() == env_.self.node && message.from_shard() == 0);
    if (barrier.version() <= fence_) return SendDone(env_, Address{env_.self.node, 0}, barrier.request_id(), barrier.version());
    waiting_[barrier.version()].insert(barrier.request_id());
    return DrainHeld();
  }
  const Address driver{message.from_node(), message.from_shard()};
  for (auto& [id, asked] : asked_) {
    if (asked.driver == driver && asked.version == barrier.version()) {
      asked.request_id = barrier.request_id();  // asked again: answer the newest
      return;
    }
  }
  const uint64_t id = ++last_id_;
  asked_[id] = Asked{driver, barrier.request_id(), barrier.version(), {}};
  for (ShardId shard = 1; shard < shards_; shard++) {
    Envelope ask;
    ask.mutable_topology_barrier()->set_request_id(id);
    ask.mutable_topology_barrier()->set_version(barrier.version());
    env_.network->Send(Address{env_.self.node, shard}, std::move(ask));
  }
  if (log_.topology().version() < barrier.version()) {
    CHARYBDIS_PROBE(env_.probes, "topology.barrier_behind");
    catch_up_();
  }
  if (barrier.version() <= fence_) return AnswerDrivers();
  waiting_[barrier.version()];
  DrainHeld();
}

void BarrierAnswerer::OnShardDone(const Envelope& message) {
  CHARYBDIS_ASSERT(env_.self.shard == 0 && message.from_node() == env_.self.node);
  auto it = asked_.find(message.topology_barrier_done().request_id());
  if (it == asked_.end()) return;  // answered already (a shard told twice)
  it->second.fenced.insert(message.from_shard());
  AnswerDrivers();
}

void BarrierAnswerer::OnTopologyChange() { DrainHeld(); }

void BarrierAnswerer::DrainHeld() {
  const uint64_t held = log_.topology().version();
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first <= held;) {
    const uint64_t version = it->first;
    if (draining_.insert(version).second) {
      env_.clock->After(drain_, [this, version] { Fenced(version); });
    }
    // Shard 0 answers from asked_; the other shards answer shard 0's
    // request ids once fenced.
    it = env_.self.shard == 0 ? waiting_.erase(it) : std::next(it);
  }
}

void BarrierAnswerer::Fenced(uint64_t version) {
  CHARYBDIS_ASSERT(draining_.erase(version) == 1);
  fence_ = std::max(fence_, version);
  if (env_.self.shard == 0) return AnswerDrivers();
  // Every version up to the fence is answered.
  while (!waiting_.empty() && waiting_.begin()->first <= fence_) {
    for (uint64_t request_id : waiting_.begin()->second) {
      SendDone(env_, Address{env_.self.node, 0}, request_id, waiting_.begin()->first);
    }
    waiting_.erase(waiting_.begin());
  }
}

void BarrierAnswerer::AnswerDrivers() {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  for (auto it = asked_.begin(); it != asked_.end();) {
    Asked& asked = it->second;
    if (asked.version <= fence_) asked.fenced.insert(0);
    if (asked.fenced.size() < shards_) {
      ++it;
      continue;
    }
    CHARYBDIS_PROBE(env_.probes, "topology.barrier_answered");
    SendDone(env_, asked.driver, asked.request_id, asked.version);
    it = asked_.erase(it);
  }
}

}  // namespace charybdis::topology
