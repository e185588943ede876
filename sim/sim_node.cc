#include "sim/sim_node.h"

#include "core/env/assert.h"
#include "sim/envelope_kinds.h"

namespace charybdis::sim {

// The environment of one shard for one life of its node.
class SimNode::ShardRuntime final : public Clock, public Reactor {
 public:
  ShardRuntime(SimNode& node, ShardId shard, Random random)
      : node_(node),
        shard_id_(shard),
        random_(random),
        network_(node.network_, Address{node.config_.id, shard}, [&node](Envelope::BodyCase body) {
          node.AtMoment(scenario::CrashPointFault::AFTER_REPLY, body);
        }) {
    ShardEnv env;
    env.self = Address{node.config_.id, shard};
    env.clock = this;
    env.network = &network_;
    env.storage = node.storages_[shard].get();
    env.random = &random_;
    env.buggify = &node.buggify_;
    env.probes = &node.probes_;
    env.reactor = this;
    shard_ = std::make_unique<Shard>(env, node.config_);
  }

  Shard& shard() { return *shard_; }

  Nanos Now() const override { return node_.clock_.Local(node_.simulator_.now()); }

  TimerId After(Nanos delay, std::function<void()> fn) override {
    const TimerId id = ++last_timer_;
    Simulator& simulator = node_.simulator_;
    const EventId event = simulator.Schedule(
        simulator.now() + node_.clock_.TrueDelay(delay),
        EventTag{EventKind::kTimer, node_.host_, shard_id_, id},
        /*bound=*/true, [this, id, fn = std::move(fn)] {
          // Cancelled while its node was paused: the event still came.
          if (pending_timers_.erase(id) == 0) return;
          fn();
        });
    pending_timers_.emplace(id, event);
    return id;
  }

  void Cancel(TimerId id) override {
    auto it = pending_timers_.find(id);
    if (it == pending_timers_.end()) return;
    node_.simulator_.Cancel(it->second);
    pending_timers_.erase(it);
  }

  void Post(std::function<void()> fn) override {
    Simulator& simulator = node_.simulator_;
    simulator.Schedule(simulator.now(), EventTag{EventKind::kPost, node_.host_, shard_id_, 0},
                       /*bound=*/true, std::move(fn));
  }

 private:
  SimNode& node_;
  ShardId shard_id_;
  Random random_;
  ShardNetwork network_;
  TimerId last_timer_ = 0;
  std::map<TimerId, EventId> pending_timers_;
  std::unique_ptr<Shard> shard_;
};

SimNode::SimNode(Simulator& simulator, SimNetwork& network, SimBuggify& buggify,
                 Probes& probes, NodeConfig config, uint32_t host, Random random,
                 const scenario::StorageProfile& storage, NodeClock clock)
    : simulator_(simulator),
      network_(network),
      buggify_(buggify),
      probes_(probes),
      config_(std::move(config)),
      host_(host),
      random_(random),
      clock_(clock) {
  CHARYBDIS_ASSERT(SimNetwork::NodeOf(host) == config_.id);
  retired_counters_.resize(config_.shards);
  retired_histograms_.resize(config_.shards);
  for (ShardId shard = 0; shard < config_.shards; shard++) {
    storages_.push_back(std::make_unique<SimStorage>(simulator, host, shard,
                                                     random_.Fork(shard), storage));
    storages_.back()->set_moment_observer([this](StorageMoment moment) {
      return AtMoment(moment == StorageMoment::kSyncIssued ? scenario::CrashPointFault::BEFORE_SYNC
                                                           : scenario::CrashPointFault::AFTER_SYNC,
                      Envelope::BODY_NOT_SET);
    });
  }
}

bool SimNode::AtMoment(scenario::CrashPointFault::Point point, Envelope::BodyCase body) {
  if (!crash_point_ || crash_point_->point != point) return false;
  if (point == scenario::CrashPointFault::AFTER_REPLY) {
    const bool wanted = crash_point_->reply == Envelope::BODY_NOT_SET ? IsReply(body)
                                                                       : body == crash_point_->reply;
    if (!wanted) return false;
  }
  CHARYBDIS_ASSERT(running());
  if (crash_point_->allowed && !crash_point_->allowed()) return false;
  std::function<void()> fire = std::move(crash_point_->fire);
  crash_point_.reset();
  simulator_.AfterCurrentEvent(std::move(fire));
  return true;
}

SimNode::~SimNode() { network_.ClearReceivers(host_); }

void SimNode::Start() {
  CHARYBDIS_ASSERT(!running());
  starts_++;
  for (ShardId shard = 0; shard < config_.shards; shard++) {
    // Each life draws fresh numbers: a restarted node is not a replay.
    const uint64_t stream = (starts_ << 32) | (uint64_t{1} << 31) | shard;
    shards_.push_back(std::make_unique<ShardRuntime>(*this, shard, random_.Fork(stream)));
  }
  for (auto& runtime : shards_) runtime->shard().Start();
}

void SimNode::Crash(CrashKind kind) {
  CHARYBDIS_ASSERT(running());
  crash_point_.reset();
  for (ShardId shard = 0; shard < config_.shards; shard++) {
    for (const auto& [name, value] : shards_[shard]->shard().metrics().Counters()) {
      retired_counters_[shard][name] += value;
    }
    for (const auto& [name, histogram] : shards_[shard]->shard().metrics().Histograms()) {
      retired_histograms_[shard][name].Merge(*histogram);
    }
  }
  simulator_.Crash(host_);
  network_.ClearReceivers(host_);
  shards_.clear();
  for (auto& storage : storages_) storage->Crash(kind);
}

void SimNode::Pause() {
  CHARYBDIS_ASSERT(running());
  simulator_.Pause(host_);
}

void SimNode::Resume() { simulator_.Resume(host_); }

const FailureDetector* SimNode::failure_detector() const {
  if (!running()) return nullptr;
  return shards_.front()->shard().failure_detector();
}

std::map<std::string, uint64_t> SimNode::Counters(ShardId shard) const {
  std::map<std::string, uint64_t> counters = retired_counters_.at(shard);
  if (running()) {
    for (const auto& [name, value] : shards_[shard]->shard().metrics().Counters()) {
      counters[name] += value;
    }
  }
  return counters;
}

std::vector<NodeId> SimNode::LiveNodesSeenBy(ShardId shard) const {
  CHARYBDIS_ASSERT(running());
  return shards_.at(shard)->shard().liveness().UpNodes();
}

SchemaSnapshot SimNode::Schema() const {
  CHARYBDIS_ASSERT(running());
  return shards_.at(0)->shard().SchemaNow();
}

topology::OperationDriver::Progress SimNode::OperationProgress() const {
  CHARYBDIS_ASSERT(running());
  return shards_.at(0)->shard().operation_progress();
}

std::string SimNode::JoinWaitingFor() const {
  CHARYBDIS_ASSERT(running());
  return shards_.at(0)->shard().join_waiting_for();
}

const topology::TopologyLog& SimNode::TopologyLog(ShardId shard) const {
  CHARYBDIS_ASSERT(running());
  return shards_.at(shard)->shard().topology_log();
}

const repair::RepairHistory& SimNode::RepairHistory(ShardId shard) const {
  CHARYBDIS_ASSERT(running());
  return shards_.at(shard)->shard().repair_history();
}

std::map<std::string, Histogram> SimNode::Histograms(ShardId shard) const {
  std::map<std::string, Histogram> histograms = retired_histograms_.at(shard);
  if (running()) {
    for (const auto& [name, histogram] : shards_[shard]->shard().metrics().Histograms()) {
      histograms[name].Merge(*histogram);
    }
  }
  return histograms;
}

void SimNode::set_disk_faults(DiskFaults faults) {
  for (auto& storage : storages_) storage->set_faults(faults);
}

}  // namespace charybdis::sim
