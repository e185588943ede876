#include "sim/simulator.h"

#include <algorithm>
#include <cinttypes>

#include "core/env/assert.h"
#include "core/env/random.h"

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

// Heap order on (time, sequence): equal times run in schedule order.
bool Earlier(const auto& a, const auto& b) {
  if (a.time != b.time) return a.time < b.time;
  return a.sequence < b.sequence;
}

}  // namespace

uint32_t Simulator::AddHost() {
  hosts_.emplace_back();
  return static_cast<uint32_t>(hosts_.size() - 1);
}

EventId Simulator::Schedule(Nanos at, EventTag tag, bool bound, std::function<void()> fn) {
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
  Slot& entry = slots_[slot];
  entry.tag = tag;
  entry.incarnation = bound ? hosts_[tag.host].incarnation : kAnyIncarnation;
  entry.fn = std::move(fn);
  Push(at, slot);
  return EventId{slot, entry.sequence};
}

bool Simulator::Cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& slot = slots_[id.slot];
  if (slot.sequence != id.sequence || slot.heap_index == kNotQueued) return false;
  RemoveFromHeap(slot.heap_index);
  Release(id.slot);
  return true;
}

void Simulator::Place(size_t index, const HeapEntry& entry) {
  heap_[index] = entry;
  slots_[entry.slot].heap_index = static_cast<uint32_t>(index);
}

void Simulator::SiftUp(size_t index) {
  const HeapEntry entry = heap_[index];
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (!Earlier(entry, heap_[parent])) break;
    Place(index, heap_[parent]);
    index = parent;
  }
  Place(index, entry);
}

void Simulator::SiftDown(size_t index) {
  const HeapEntry entry = heap_[index];
  const size_t size = heap_.size();
  while (true) {
    size_t child = 2 * index + 1;
    if (child >= size) break;
    if (child + 1 < size && Earlier(heap_[child + 1], heap_[child])) child++;
    if (!Earlier(heap_[child], entry)) break;
    Place(index, heap_[child]);
    index = child;
  }
  Place(index, entry);
}

void Simulator::RemoveFromHeap(size_t index) {
  CHARYBDIS_ASSERT(index < heap_.size());
  slots_[heap_[index].slot].heap_index = kNotQueued;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (index == heap_.size()) return;
  Place(index, last);
  if (index > 0 && Earlier(last, heap_[(index - 1) / 2])) {
    SiftUp(index);
  } else {
    SiftDown(index);
  }
}

void Simulator::Push(Nanos at, uint32_t slot) {
  const uint64_t sequence = next_sequence_++;
  slots_[slot].sequence = sequence;
  heap_.push_back(HeapEntry{at, sequence, slot});
  SiftUp(heap_.size() - 1);
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
  const HeapEntry entry = heap_.front();
  RemoveFromHeap(0);
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
  while (!after_event_.empty()) {
    std::vector<std::function<void()>> due = std::move(after_event_);
    after_event_.clear();
    for (auto& run : due) run();
  }
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
