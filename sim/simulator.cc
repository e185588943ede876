#include "sim/simulator.h"

#include <algorithm>
#include <cinttypes>

#include "core/assert.h"
#include "core/random.h"

namespace charybdis::sim {

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kTimer: return "timer";
    case EventKind::kPost: return "post";
    case EventKind::kStorage: return "storage";
    case EventKind::kDelivery: return "delivery";
    case EventKind::kFault: return "fault";
    case EventKind::kClient: return "client";
  }
  return "unknown";
}

namespace {

// Min-heap order on (time, sequence): equal times run in schedule order.
bool Later(const auto& a, const auto& b) {
  if (a.time != b.time) return a.time > b.time;
  return a.sequence > b.sequence;
}

}  // namespace

uint32_t Simulator::AddHost() {
  hosts_.emplace_back();
  return static_cast<uint32_t>(hosts_.size() - 1);
}

void Simulator::Schedule(Nanos at, EventTag tag, bool bound, std::function<void()> fn) {
  CHARYBDIS_ASSERT(at >= now_);
  CHARYBDIS_ASSERT(tag.host < hosts_.size());
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[slot] = Slot{tag, bound ? hosts_[tag.host].incarnation : kAnyIncarnation,
                      std::move(fn)};
  Push(at, slot);
}

void Simulator::Push(Nanos at, uint32_t slot) {
  heap_.push_back(HeapEntry{at, next_sequence_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), [](const auto& a, const auto& b) { return Later(a, b); });
}

void Simulator::Release(uint32_t slot) {
  slots_[slot].fn = nullptr;
  free_slots_.push_back(slot);
}

void Simulator::Crash(uint32_t host) {
  Host& state = hosts_[host];
  state.incarnation++;
  CHARYBDIS_ASSERT(state.incarnation != kAnyIncarnation);
  for (uint32_t slot : state.deferred) Release(slot);
  state.deferred.clear();
  state.paused = false;
}

void Simulator::Pause(uint32_t host) { hosts_[host].paused = true; }

void Simulator::Resume(uint32_t host) {
  Host& state = hosts_[host];
  state.paused = false;
  // What came due during the pause runs now, in its original order.
  for (uint32_t slot : state.deferred) Push(now_, slot);
  state.deferred.clear();
}

void Simulator::Step() {
  CHARYBDIS_ASSERT(!heap_.empty());
  std::pop_heap(heap_.begin(), heap_.end(), [](const auto& a, const auto& b) { return Later(a, b); });
  const HeapEntry entry = heap_.back();
  heap_.pop_back();
  CHARYBDIS_ASSERT(entry.time >= now_);
  now_ = entry.time;

  Slot& slot = slots_[entry.slot];
  Host& host = hosts_[slot.tag.host];
  // Faults act on a host from outside: neither a crash nor a pause stops them.
  if (slot.tag.kind != EventKind::kFault) {
    if (slot.incarnation != kAnyIncarnation && slot.incarnation != host.incarnation) {
      Release(entry.slot);  // bound to a life of the host that crashed
      return;
    }
    if (host.paused) {
      host.deferred.push_back(entry.slot);
      return;
    }
  }
  Fold(entry, slot.tag);
  // The callback may schedule events and so grow slots_: run a moved copy.
  std::function<void()> fn = std::move(slot.fn);
  Release(entry.slot);
  fn();
}

void Simulator::RunUntil(Nanos time) {
  CHARYBDIS_ASSERT(time >= now_);
  while (!heap_.empty() && heap_.front().time <= time) Step();
  now_ = time;
}

void Simulator::Fold(const HeapEntry& entry, const EventTag& tag) {
  events_processed_++;
  uint64_t h = trace_hash_;
  h = Mix64(h ^ static_cast<uint64_t>(entry.time));
  h = Mix64(h ^ (static_cast<uint64_t>(tag.kind) | static_cast<uint64_t>(tag.host) << 8 |
                 static_cast<uint64_t>(tag.shard) << 40));
  h = Mix64(h ^ tag.detail);
  trace_hash_ = h;
  if (trace_file_ != nullptr) {
    std::fprintf(trace_file_,
                 "%" PRIu64 " t=%" PRId64 " %s host=%u shard=%u detail=%016" PRIx64
                 " hash=%016" PRIx64 "\n",
                 events_processed_, entry.time, EventKindName(tag.kind), tag.host,
                 tag.shard, tag.detail, h);
  }
}

}  // namespace charybdis::sim
