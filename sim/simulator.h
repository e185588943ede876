#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "core/env/time.h"

namespace charybdis::sim {

enum class EventKind : uint8_t {
  kTimer,
  kPost,
  kStorage,
  kDelivery,
  kFault,
  kClient,
};

const char* EventKindName(EventKind kind);

// What an event is about: folded into the trace hash and written to the
// trace, so two runs can be compared event by event.
struct EventTag {
  EventKind kind = EventKind::kFault;
  uint32_t host = 0;   // index of the node or client the event belongs to
  uint32_t shard = 0;
  uint64_t detail = 0; // kind-specific: timer id, message type and sender...
};

// Names a scheduled event, to cancel it.
struct EventId {
  uint32_t slot = 0;
  uint64_t sequence = UINT64_MAX;
};

// The deterministic kernel: one event queue for the whole cluster, ordered
// by (time, sequence). Time jumps to the next event. The queue is an
// indexed binary heap, so cancelled events (most timeouts never fire)
// leave it at once instead of weighing on every later step. Each host has an
// incarnation (bumped by a crash, which drops the events bound to the old
// one) and can be paused (its events wait until it resumes).
class Simulator {
 public:
  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Nanos now() const { return now_; }
  uint64_t trace_hash() const { return trace_hash_; }
  uint64_t events_processed() const { return events_processed_; }

  // Writes one line per processed event (nullptr: none).
  void set_trace_file(std::FILE* file) { trace_file_ = file; }

  uint32_t AddHost();
  // `bound`: dropped if the host crashes before it runs. Unbound events (a
  // message on the wire) still run after a restart.
  EventId Schedule(Nanos at, EventTag tag, bool bound, std::function<void()> fn);
  // Drops an event that has not run yet; false if it ran, was cancelled, or
  // is waiting for its paused host (such an event still runs on resume).
  bool Cancel(EventId id);

  // Runs `fn` as soon as the event being processed returns, before any
  // other event: a crash point fires there, so a node never dies inside
  // its own callback.
  void AfterCurrentEvent(std::function<void()> fn) { after_event_.push_back(std::move(fn)); }

  void Crash(uint32_t host);
  void Pause(uint32_t host);
  void Resume(uint32_t host);
  bool paused(uint32_t host) const { return hosts_[host].paused; }

  bool empty() const { return heap_.empty(); }
  // Time of the next event. REQUIRES: !empty().
  Nanos next_time() const { return heap_.front().time; }
  // Runs the next event. REQUIRES: !empty().
  void Step();
  // Runs every event due by `time`, then moves the clock to `time`.
  void RunUntil(Nanos time);

 private:
  static constexpr uint32_t kAnyIncarnation = UINT32_MAX;

  static constexpr uint32_t kNotQueued = UINT32_MAX;

  struct Slot {
    EventTag tag;
    uint32_t incarnation = 0;
    uint64_t sequence = 0;
    uint32_t heap_index = kNotQueued;
    std::function<void()> fn;
  };
  struct HeapEntry {
    Nanos time;
    uint64_t sequence;
    uint32_t slot;
  };
  struct Host {
    uint32_t incarnation = 0;
    bool paused = false;
    std::vector<uint32_t> deferred;  // slots, in the order they came due
  };

  void Push(Nanos at, uint32_t slot);
  void RemoveFromHeap(size_t index);
  void SiftUp(size_t index);
  void SiftDown(size_t index);
  void Place(size_t index, const HeapEntry& entry);
  void Fold(const HeapEntry& entry, const EventTag& tag);
  void Release(uint32_t slot);

  Nanos now_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t trace_hash_ = 0x6368617279626469ULL;  // "charybdi"
  uint64_t events_processed_ = 0;
  std::vector<HeapEntry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<Host> hosts_;
  std::vector<std::function<void()>> after_event_;
  std::FILE* trace_file_ = nullptr;
};

}  // namespace charybdis::sim
