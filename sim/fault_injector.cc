#include "sim/fault_injector.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/env/assert.h"
#include "core/workload/fault_kinds.h"
#include "sim/envelope_kinds.h"

namespace charybdis::sim {

std::string FaultWorld::ToString() const {
  return absl::StrFormat(
      "crashes/min=%.2f partitions/min=%.2f clogs/min=%.2f pauses/min=%.2f "
      "disk_faults/min=%.2f clock_skews/min=%.2f crash_points/min=%.2f power_cuts=%.2f "
      "loss=%.4f duplicate=%.4f reorder=%.4f",
      crashes_per_minute, partitions_per_minute, clogs_per_minute, pauses_per_minute,
      disk_faults_per_minute, clock_skews_per_minute, crash_points_per_minute,
      power_cut_fraction, messages.loss, messages.duplicate, messages.reorder);
}

namespace {

// Swarm testing: a kind of fault is on in half the seeds, at a rate drawn
// uniformly up to its maximum.
double DrawRate(Random& random, double max) {
  if (max <= 0 || !random.Chance(0.5)) return 0;
  return random.Unit() * max;
}

std::vector<NodeId> Nodes(const google::protobuf::RepeatedField<uint32_t>& field) {
  return std::vector<NodeId>(field.begin(), field.end());
}

}  // namespace

FaultInjector::FaultInjector(Simulator& simulator, Cluster& cluster,
                             const scenario::Scenario& spec, Random random)
    : simulator_(simulator), cluster_(cluster), spec_(spec), random_(random) {
  const auto& faults = spec.random_faults();
  world_.crashes_per_minute = DrawRate(random_, faults.max_crashes_per_minute());
  world_.partitions_per_minute = DrawRate(random_, faults.max_partitions_per_minute());
  world_.clogs_per_minute = DrawRate(random_, faults.max_clogs_per_minute());
  world_.pauses_per_minute = DrawRate(random_, faults.max_pauses_per_minute());
  world_.disk_faults_per_minute = DrawRate(random_, faults.max_disk_faults_per_minute());
  world_.clock_skews_per_minute = DrawRate(random_, faults.max_clock_skews_per_minute());
  const auto& baseline = cluster.network().faults();
  world_.messages.loss = std::max(baseline.loss, DrawRate(random_, faults.max_loss()));
  world_.messages.duplicate =
      std::max(baseline.duplicate, DrawRate(random_, faults.max_duplicate()));
  world_.messages.reorder = std::max(baseline.reorder, DrawRate(random_, faults.max_reorder()));
  // A stream of its own, so that worlds drawn before these kinds existed
  // stay the same.
  Random later_kinds = random.Fork(1);
  world_.crash_points_per_minute = DrawRate(later_kinds, faults.max_crash_points_per_minute());
  world_.power_cut_fraction = DrawRate(later_kinds, faults.max_power_cut_fraction());
  max_nodes_down_ = faults.max_nodes_down() != 0
                        ? faults.max_nodes_down()
                        : static_cast<uint32_t>((cluster.size() - 1) / 2);
  random_end_ = static_cast<Nanos>(faults.end_ms()) * kMillisecond;
}

namespace {

uint64_t CeilMs(Nanos duration) {
  return std::max<uint64_t>(1, static_cast<uint64_t>((duration + kMillisecond - 1) / kMillisecond));
}

void SetMessageFaults(scenario::MessageFaultsAction& action, const MessageFaults& faults) {
  action.set_loss(faults.loss);
  action.set_duplicate(faults.duplicate);
  action.set_reorder(faults.reorder);
}

}  // namespace

scenario::FaultAction& FaultInjector::Record() {
  scenario::FaultAction& action = *happened_.add_action();
  action.set_at_ms(static_cast<uint64_t>(simulator_.now() / kMillisecond));
  action.set_at_us(static_cast<uint32_t>(simulator_.now() % kMillisecond / kMicrosecond));
  return action;
}

void FaultInjector::Schedule() {
  happened_ = spec_.faults();
  for (const auto& action : spec_.faults().action()) ScheduleAction(action);
  if (spec_.has_random_faults()) ScheduleRandom();
}

void FaultInjector::ScheduleAction(const scenario::FaultAction& action) {
  const Nanos at = static_cast<Nanos>(action.at_ms()) * kMillisecond +
                   static_cast<Nanos>(action.at_us()) * kMicrosecond;
  const FaultKind& kind = FaultKindOf(action.kind_case());
  const Nanos lasts =
      kind.duration_ms == nullptr ? 0 : static_cast<Nanos>(kind.duration_ms(action)) * kMillisecond;
  quiet_from_ = std::max(quiet_from_, at + lasts);
  simulator_.Schedule(at, EventTag{EventKind::kFault, 0, 0, 100 + static_cast<uint64_t>(action.kind_case())},
                      /*bound=*/false, [this, &action] { Apply(action); });
}

void FaultInjector::Apply(const scenario::FaultAction& action) {
  switch (action.kind_case()) {
    case scenario::FaultAction::kCrash:
      cluster_.Crash(action.crash().node(),
                     action.crash().power_cut() ? CrashKind::kPowerCut : CrashKind::kCrash);
      return;
    case scenario::FaultAction::kCrashPoint:
      ArmScriptedCrashPoint(action.crash_point());
      return;
    case scenario::FaultAction::kRestart:
      cluster_.Restart(action.restart().node());
      return;
    case scenario::FaultAction::kPartition: {
      const auto& partition = action.partition();
      std::vector<NodeId> side_b = Nodes(partition.side_b());
      if (side_b.empty()) {
        const std::vector<NodeId> side_a = Nodes(partition.side_a());
        for (NodeId id = 1; id <= cluster_.size(); id++) {
          if (std::find(side_a.begin(), side_a.end(), id) == side_a.end()) side_b.push_back(id);
        }
      }
      cluster_.Partition(Nodes(partition.side_a()), side_b, partition.one_way());
      return;
    }
    case scenario::FaultAction::kHeal:
      cluster_.Heal();
      return;
    case scenario::FaultAction::kClog:
      cluster_.Clog(action.clog().node(), action.clog().duration_ms() * kMillisecond);
      return;
    case scenario::FaultAction::kClockSkew:
      cluster_.SkewClock(action.clock_skew().node(), action.clock_skew().offset_ms() * kMillisecond,
                         action.clock_skew().drift_ppm());
      return;
    case scenario::FaultAction::kDisk: {
      const auto& disk = action.disk();
      cluster_.FailDisk(disk.node(),
                        DiskFaults{disk.fail_reads(), disk.fail_writes(),
                                   static_cast<Nanos>(disk.extra_latency_us()) * kMicrosecond,
                                   disk.corrupt_read_probability(),
                                   disk.misdirect_write_probability(), disk.torn_writes()},
                        disk.duration_ms() * kMillisecond);
      return;
    }
    case scenario::FaultAction::kPause:
      cluster_.Pause(action.pause().node(), action.pause().duration_ms() * kMillisecond);
      return;
    case scenario::FaultAction::kMessages:
      cluster_.network().set_faults(MessageFaults{action.messages().loss(),
                                                  action.messages().duplicate(),
                                                  action.messages().reorder()});
      return;
    case scenario::FaultAction::KIND_NOT_SET:
      break;
  }
  CHARYBDIS_ASSERT(false && "the validator lets no fault action without a kind through");
}

void FaultInjector::ScheduleRandom() {
  const Nanos start = static_cast<Nanos>(spec_.random_faults().start_ms()) * kMillisecond;
  quiet_from_ = std::max(quiet_from_, random_end_);
  simulator_.Schedule(start, EventTag{EventKind::kFault, 0, 0, 200}, false, [this] {
    cluster_.network().set_faults(world_.messages);
    SetMessageFaults(*Record().mutable_messages(), world_.messages);
    Arrivals(world_.crashes_per_minute, 201, [this] { RandomCrash(); });
    Arrivals(world_.partitions_per_minute, 202, [this] { RandomPartition(); });
    Arrivals(world_.clogs_per_minute, 203, [this] { RandomClog(); });
    Arrivals(world_.pauses_per_minute, 204, [this] { RandomPause(); });
    Arrivals(world_.disk_faults_per_minute, 205, [this] { RandomDiskFault(); });
    Arrivals(world_.clock_skews_per_minute, 206, [this] { RandomClockSkew(); });
    Arrivals(world_.crash_points_per_minute, 207, [this] { RandomCrashPoint(); });
  });
  simulator_.Schedule(random_end_, EventTag{EventKind::kFault, 0, 0, 299}, false,
                      [this] { EndRandomFaults(); });
}

void FaultInjector::Arrivals(double per_minute, uint64_t detail, std::function<void()> fault) {
  if (per_minute <= 0) return;
  const double mean_gap_ns = 60.0 * kSecond / per_minute;
  const Nanos at = simulator_.now() + static_cast<Nanos>(random_.Exponential(mean_gap_ns));
  if (at >= random_end_) return;
  simulator_.Schedule(at, EventTag{EventKind::kFault, 0, 0, detail}, false,
                      [this, per_minute, detail, fault = std::move(fault)] {
                        fault();
                        Arrivals(per_minute, detail, fault);
                      });
}

Nanos FaultInjector::DrawDuration(uint64_t max_ms) {
  const uint64_t max = std::max<uint64_t>(max_ms, 1);
  return static_cast<Nanos>(1 + random_.Below(max)) * kMillisecond;
}

NodeId FaultInjector::PickNodeToTakeDown() {
  if (cluster_.nodes_down() >= max_nodes_down_) return 0;
  std::vector<NodeId> candidates;
  for (NodeId id = 1; id <= cluster_.size(); id++) {
    if (cluster_.node(id).running() && !cluster_.node(id).paused()) candidates.push_back(id);
  }
  if (candidates.empty()) return 0;
  return candidates[random_.Below(candidates.size())];
}

void FaultInjector::ArmScriptedCrashPoint(const scenario::CrashPointFault& spec) {
  CrashPoint point;
  point.point = spec.point();
  point.reply = EnvelopeBodyNamed(spec.message());
  point.kind = spec.power_cut() ? CrashKind::kPowerCut : CrashKind::kCrash;
  const NodeId id = spec.node();
  // Every moment the point sees is counted (--every_crash_point learns how
  // many a run has from one whose skip is never reached).
  point.allowed = [this, skip = spec.skip()] { return ++crash_point_moments_ > skip; };
  const Nanos restart_after = static_cast<Nanos>(spec.restart_after_ms()) * kMillisecond;
  point.fire = [this, id, restart_after] {
    if (restart_after == 0) return;
    const Nanos at = simulator_.now() + restart_after;
    quiet_from_ = std::max(quiet_from_, at);  // the run settles after the restart
    simulator_.Schedule(at, EventTag{EventKind::kFault, 0, 0, 120}, false,
                        [this, id] { cluster_.Restart(id); });
  };
  cluster_.ArmCrashPoint(id, std::move(point));
}

CrashKind FaultInjector::DrawCrashKind() {
  // No draw when power cuts are off, so older worlds keep their numbers.
  if (world_.power_cut_fraction <= 0) return CrashKind::kCrash;
  return random_.Chance(world_.power_cut_fraction) ? CrashKind::kPowerCut : CrashKind::kCrash;
}

void FaultInjector::ScheduleRandomRestart(NodeId id) {
  crashed_at_random_.insert(id);
  const Nanos restart_at =
      simulator_.now() + DrawDuration(spec_.random_faults().max_downtime_ms());
  if (restart_at >= random_end_) return;  // EndRandomFaults restarts it
  simulator_.Schedule(restart_at, EventTag{EventKind::kFault, 0, 0, 211}, false, [this, id] {
    if (!crashed_at_random_.erase(id)) return;
    cluster_.Restart(id);
    Record().mutable_restart()->set_node(id);
  });
}

void FaultInjector::RandomCrash() {
  const NodeId id = PickNodeToTakeDown();
  if (id == 0) return;
  const CrashKind kind = DrawCrashKind();
  cluster_.Crash(id, kind);
  scenario::NodeFault& crash = *Record().mutable_crash();
  crash.set_node(id);
  crash.set_power_cut(kind == CrashKind::kPowerCut);
  ScheduleRandomRestart(id);
}

void FaultInjector::RandomCrashPoint() {
  const NodeId id = PickNodeToTakeDown();
  if (id == 0) return;
  static constexpr scenario::CrashPointFault::Point kPoints[] = {
      scenario::CrashPointFault::AFTER_REPLY, scenario::CrashPointFault::BEFORE_SYNC,
      scenario::CrashPointFault::AFTER_SYNC};
  CrashPoint point;
  point.point = kPoints[random_.Below(3)];
  point.kind = DrawCrashKind();
  // The moment may come late: by then the limit on nodes down still holds,
  // and after the random faults end it never fires.
  point.allowed = [this] {
    return simulator_.now() < random_end_ && cluster_.nodes_down() < max_nodes_down_;
  };
  point.fire = [this, id, moment = point.point, power_cut = point.kind == CrashKind::kPowerCut] {
    scenario::CrashPointFault& fired = *Record().mutable_crash_point();
    fired.set_node(id);
    fired.set_point(moment);
    fired.set_power_cut(power_cut);
    ScheduleRandomRestart(id);
  };
  cluster_.ArmCrashPoint(id, std::move(point));
}

void FaultInjector::RandomPartition() {
  std::vector<NodeId> side_a, side_b;
  for (NodeId id = 1; id <= cluster_.size(); id++) {
    (random_.Chance(0.5) ? side_a : side_b).push_back(id);
  }
  if (side_a.empty() || side_b.empty()) return;
  const bool one_way = random_.Chance(0.25);
  cluster_.Partition(side_a, side_b, one_way);
  scenario::PartitionFault& partition = *Record().mutable_partition();
  for (NodeId id : side_a) partition.add_side_a(id);
  for (NodeId id : side_b) partition.add_side_b(id);
  partition.set_one_way(one_way);
  const Nanos heal_at = simulator_.now() + DrawDuration(spec_.random_faults().max_partition_ms());
  if (heal_at >= random_end_) return;
  simulator_.Schedule(heal_at, EventTag{EventKind::kFault, 0, 0, 212}, false, [this] {
    cluster_.Heal();
    Record().mutable_heal();
  });
}

void FaultInjector::RandomClog() {
  const NodeId id = static_cast<NodeId>(1 + random_.Below(cluster_.size()));
  const Nanos duration = std::min(DrawDuration(spec_.random_faults().max_clog_ms()),
                                  random_end_ - simulator_.now());
  cluster_.Clog(id, duration);
  scenario::ClogFault& clog = *Record().mutable_clog();
  clog.set_node(id);
  clog.set_duration_ms(CeilMs(duration));
}

void FaultInjector::RandomPause() {
  const NodeId id = PickNodeToTakeDown();
  if (id == 0) return;
  const Nanos duration = std::min(DrawDuration(spec_.random_faults().max_pause_ms()),
                                  random_end_ - simulator_.now());
  cluster_.Pause(id, duration);
  scenario::PauseFault& pause = *Record().mutable_pause();
  pause.set_node(id);
  pause.set_duration_ms(CeilMs(duration));
}

void FaultInjector::RandomDiskFault() {
  const NodeId id = static_cast<NodeId>(1 + random_.Below(cluster_.size()));
  const auto& faults = spec_.random_faults();
  DiskFaults disk;
  disk.fail_reads = random_.Chance(0.3);
  disk.fail_writes = random_.Chance(0.3);
  disk.extra_latency = static_cast<Nanos>(random_.Below(faults.max_disk_extra_latency_us() + 1)) *
                       kMicrosecond;
  const Nanos duration =
      std::min(DrawDuration(faults.max_disk_fault_ms()), random_end_ - simulator_.now());
  cluster_.FailDisk(id, disk, duration);
  scenario::DiskFault& recorded = *Record().mutable_disk();
  recorded.set_node(id);
  recorded.set_fail_reads(disk.fail_reads);
  recorded.set_fail_writes(disk.fail_writes);
  recorded.set_extra_latency_us(static_cast<uint64_t>(disk.extra_latency / kMicrosecond));
  recorded.set_duration_ms(CeilMs(duration));
}

void FaultInjector::RandomClockSkew() {
  const NodeId id = static_cast<NodeId>(1 + random_.Below(cluster_.size()));
  const auto max_step = static_cast<int64_t>(spec_.random_faults().max_clock_skew_ms());
  const auto max_drift = static_cast<int64_t>(spec_.clocks().max_drift_ppm());
  const int64_t offset_ms = random_.Between(-max_step, max_step);
  const auto drift_ppm = static_cast<int32_t>(random_.Between(-max_drift, max_drift));
  cluster_.SkewClock(id, offset_ms * kMillisecond, drift_ppm);
  scenario::ClockSkewFault& skew = *Record().mutable_clock_skew();
  skew.set_node(id);
  skew.set_offset_ms(offset_ms);
  skew.set_drift_ppm(drift_ppm);
}

void FaultInjector::EndRandomFaults() {
  const MessageFaults normal{spec_.network().loss(), spec_.network().duplicate(),
                             spec_.network().reorder()};
  cluster_.network().set_faults(normal);
  SetMessageFaults(*Record().mutable_messages(), normal);
  cluster_.Heal();
  Record().mutable_heal();
  // Pauses and disk faults drawn at random end by now (their durations
  // stop at the end); scripted ones are cut short here.
  for (NodeId id = 1; id <= cluster_.size(); id++) {
    cluster_.Resume(id);
    cluster_.node(id).set_disk_faults(DiskFaults{});
  }
  for (NodeId id : crashed_at_random_) {
    cluster_.Restart(id);
    Record().mutable_restart()->set_node(id);
  }
  crashed_at_random_.clear();
}

}  // namespace charybdis::sim
