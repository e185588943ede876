#include "core/telemetry/tracing.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis {

std::string KindOf(const Envelope& message) {
  const auto* field = Envelope::descriptor()->FindFieldByNumber(message.body_case());
  return field == nullptr ? "empty" : field->name();
}

uint64_t Tracer::NewTrace() {
  // Node and shard in the high bits: ids from different coordinators never
  // meet on a replica.
  return (uint64_t{self_.node} << 40) | (uint64_t{self_.shard} << 32) | ++last_trace_;
}

Tracer::Trace& Tracer::Of(uint64_t trace) {
  CHARYBDIS_ASSERT(trace != 0);
  auto [it, fresh] = traces_.try_emplace(trace);
  if (fresh) {
    order_.push_back(trace);
    if (order_.size() > kMaxTraces) {
      traces_.erase(order_.front());  // never `trace`: it is the newest
      order_.pop_front();
    }
  }
  CHARYBDIS_ASSERT(traces_.size() == order_.size());
  return it->second;
}

void Tracer::NoteUpstream(uint64_t trace, const Address& from) {
  Trace& record = Of(trace);
  if (!record.upstream) record.upstream = from;
}

bool Tracer::IsUpstream(uint64_t trace, const Address& to) const {
  auto it = traces_.find(trace);
  return it != traces_.end() && it->second.upstream && *it->second.upstream == to;
}

void Tracer::Record(uint64_t trace, std::string what) {
  std::vector<TraceEvent>& steps = Of(trace).steps;
  if (steps.size() >= kMaxEvents) return;
  TraceEvent& event = steps.emplace_back();
  event.set_at_us(clock_.Now() / kMicrosecond);
  event.set_node(self_.node);
  event.set_shard(self_.shard);
  event.set_what(std::move(what));
}

void Tracer::Add(uint64_t trace, const google::protobuf::RepeatedPtrField<TraceEvent>& events) {
  if (events.empty()) return;
  std::vector<TraceEvent>& steps = Of(trace).steps;
  for (const TraceEvent& event : events) {
    if (steps.size() < kMaxEvents) steps.push_back(event);
  }
}

std::vector<TraceEvent> Tracer::Take(uint64_t trace) {
  auto it = traces_.find(trace);
  if (it == traces_.end()) return {};
  std::vector<TraceEvent> taken = std::move(it->second.steps);
  it->second.steps.clear();
  return taken;
}

void TracingNetwork::Send(const Address& to, Envelope message) {
  const uint64_t trace = tracer_.current();
  if (trace == 0) return network_.Send(to, std::move(message));
  tracer_.Record(trace, absl::StrCat("sent ", KindOf(message), " to ", to.node, "/", to.shard));
  message.set_trace_id(trace);
  // The answer to the client carries the whole timeline; a message back
  // to where the trace came from (an ack to its coordinator), or a request
  // forwarded to the shard that will coordinate it, carries this shard's
  // steps so far. Requests to replicas carry none: the steps stay here.
  const bool answer = message.has_client_response();
  if (answer || message.has_client_request() || tracer_.IsUpstream(trace, to)) {
    auto* into = answer ? message.mutable_client_response()->mutable_trace() : message.mutable_trace_events();
    for (TraceEvent& step : tracer_.Take(trace)) *into->Add() = std::move(step);
  }
  network_.Send(to, std::move(message));
}

void TracingNetwork::SetReceiver(Receiver receiver) {
  network_.SetReceiver([this, receiver = std::move(receiver)](const Envelope& message) {
    Receive(receiver, message);
  });
}

void TracingNetwork::Receive(const Receiver& receiver, const Envelope& message) {
  uint64_t trace = message.trace_id();
  const bool starts = trace == 0 && message.has_client_request() && message.client_request().trace();
  if (trace == 0 && !starts) return receiver(message);
  if (starts) trace = tracer_.NewTrace();
  tracer_.NoteUpstream(trace, Address{message.from_node(), message.from_shard()});
  tracer_.Add(trace, message.trace_events());
  tracer_.Record(trace, absl::StrCat("received ", KindOf(message), " from ", message.from_node(), "/",
                                     message.from_shard()));
  tracer_.Within(trace, [&] { receiver(message); });
}

void TracingStorage::Apply(WriteBatch batch, Durability durability, WriteDone done) {
  const uint64_t trace = tracer_.current();
  if (trace == 0) return storage_.Apply(std::move(batch), durability, std::move(done));
  const bool synced = durability == Durability::kSynced;
  tracer_.Record(trace, absl::StrCat(synced ? "synced" : "unsynced", " write issued"));
  storage_.Apply(std::move(batch), durability, [this, trace, synced, done = std::move(done)](absl::Status status) {
    tracer_.Record(trace, status.ok() ? (synced ? "write durable" : "write done")
                                      : absl::StrCat("write failed: ", status.message()));
    tracer_.Within(trace, [&] { done(std::move(status)); });
  });
}

void TracingStorage::Get(std::string key, GetDone done) {
  const uint64_t trace = tracer_.current();
  if (trace == 0) return storage_.Get(std::move(key), std::move(done));
  storage_.Get(std::move(key), [this, trace, done = std::move(done)](auto result) {
    tracer_.Record(trace, "read done");
    tracer_.Within(trace, [&] { done(std::move(result)); });
  });
}

void TracingStorage::Scan(std::string begin, std::string end, size_t limit, ScanDone done) {
  const uint64_t trace = tracer_.current();
  if (trace == 0) return storage_.Scan(std::move(begin), std::move(end), limit, std::move(done));
  storage_.Scan(std::move(begin), std::move(end), limit, [this, trace, done = std::move(done)](auto result) {
    tracer_.Record(trace, "scan done");
    tracer_.Within(trace, [&] { done(std::move(result)); });
  });
}

void TracingStorage::ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) {
  const uint64_t trace = tracer_.current();
  if (trace == 0) return storage_.ScanRanges(std::move(ranges), std::move(done));
  storage_.ScanRanges(std::move(ranges), [this, trace, done = std::move(done)](auto result) {
    tracer_.Record(trace, "scan done");
    tracer_.Within(trace, [&] { done(std::move(result)); });
  });
}

void TracingStorage::Ingest(WriteBatch puts, WriteDone done) {
  const uint64_t trace = tracer_.current();
  if (trace == 0) return storage_.Ingest(std::move(puts), std::move(done));
  tracer_.Record(trace, absl::StrCat("ingestion of ", puts.operations.size(), " pairs issued"));
  storage_.Ingest(std::move(puts), [this, trace, done = std::move(done)](absl::Status status) {
    tracer_.Record(trace, status.ok() ? "ingestion durable" : absl::StrCat("ingestion failed: ", status.message()));
    tracer_.Within(trace, [&] { done(std::move(status)); });
  });
}

}  // namespace charybdis
