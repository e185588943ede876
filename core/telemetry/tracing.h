#pragma once

// Request tracing, in the spirit of CQL's TRACING ON: a client request
// with `trace` set gets its timeline back in the answer. A shard wraps its
// network and storage in the decorators below, so no service code knows
// about tracing:
// - a traced client request starts a trace id at its coordinator;
// - while a shard handles a message of a trace, every message it sends and
//   every storage call it makes belongs to that trace, and so do their
//   callbacks (a storage completion, hence the ack sent from it);
// - each shard records what it received, sent and made durable for the
//   trace, and ships those steps with its next message back to where it
//   heard of the trace from, so they flow back to the coordinator, which
//   puts them all in the answer.
// Untraced messages pass straight through.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/env/clock.h"
#include "core/env/network.h"
#include "core/env/storage.h"

namespace charybdis {

class Tracer {
 public:
  Tracer(Address self, Clock& clock) : self_(self), clock_(clock) {}

  // The trace the shard is working for now (0: none).
  uint64_t current() const { return current_; }
  // Runs `fn` working for `trace` (then for the outer one again).
  template <typename Fn>
  void Within(uint64_t trace, Fn&& fn) {
    const uint64_t outer = current_;
    current_ = trace;
    fn();
    current_ = outer;
  }
  // A fresh id for a request this shard coordinates (unique per shard
  // life and across shards).
  uint64_t NewTrace();

  // Where this shard first heard of `trace` from: its steps go back there.
  void NoteUpstream(uint64_t trace, const Address& from);
  bool IsUpstream(uint64_t trace, const Address& to) const;

  void Record(uint64_t trace, std::string what);
  void Add(uint64_t trace, const google::protobuf::RepeatedPtrField<TraceEvent>& events);
  // The steps recorded for `trace`, handed over (they leave with a message).
  std::vector<TraceEvent> Take(uint64_t trace);

  // At most this many traces are kept per shard, and this many steps each:
  // the oldest go first (a trace whose answer was lost is abandoned).
  static constexpr size_t kMaxTraces = 256;
  static constexpr size_t kMaxEvents = 1000;

 private:

  Address self_;
  Clock& clock_;
  uint64_t current_ = 0;
  uint64_t last_trace_ = 0;
  struct Trace {
    std::vector<TraceEvent> steps;
    std::optional<Address> upstream;
  };
  // The trace's record, made room for if it is new.
  Trace& Of(uint64_t trace);

  std::map<uint64_t, Trace> traces_;
  std::deque<uint64_t> order_;  // trace ids, oldest first
};

// Stamps outgoing messages with the current trace and its steps so far;
// makes an inbound message's trace current while the shard handles it.
class TracingNetwork final : public Network {
 public:
  TracingNetwork(Network& network, Tracer& tracer) : network_(network), tracer_(tracer) {}
  void Send(const Address& to, Envelope message) override;
  void SetReceiver(Receiver receiver) override;
  void LearnAddress(NodeId node, const std::string& address) override { network_.LearnAddress(node, address); }

 private:
  void Receive(const Receiver& receiver, const Envelope& message);

  Network& network_;
  Tracer& tracer_;
};

// Carries the current trace into storage callbacks, recording when a
// traced write is done (durable, for a synced one).
class TracingStorage final : public Storage {
 public:
  TracingStorage(Storage& storage, Tracer& tracer) : storage_(storage), tracer_(tracer) {}
  void Apply(WriteBatch batch, Durability durability, WriteDone done) override;
  void Get(std::string key, GetDone done) override;
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override;
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override;
  void Ingest(WriteBatch puts, WriteDone done) override;
  void Compact(WriteDone done) override { storage_.Compact(std::move(done)); }

 private:
  Storage& storage_;
  Tracer& tracer_;
};

// The name of an envelope's body ("replica_write", ...).
std::string KindOf(const Envelope& message);

}  // namespace charybdis
