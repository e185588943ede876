#pragma once

// The receiving side of streaming (docs/topology.md, "What a stream
// carries"): one shard copies the stored key-value pairs of a table's token
// range from the same shard of a source node, chunk by chunk, as they are
// stored. Each pair must check out under its own key and lie in the range.
// Chunks are buffered up to a file's worth (or the range's end), ingested
// all at once (Storage::Ingest), and then the stream's progress (the last
// key stored) is written, synced, so a stream that a crash or power cut
// interrupts resumes after that key, and one already done stays done.
// Applying a pair twice changes nothing: stored keys are blind puts,
// reconciled at read time.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/data/token.h"
#include "core/env/shard_env.h"
#include "proto/messages.pb.h"

namespace charybdis {

struct StreamSpec {
  std::string name;  // names its progress on this shard: one per range moved
  std::string table;
  Token start_token = 0;  // [start_token, end_token]
  Token end_token = 0;
  NodeId source = 0;
  // The table's Paxos states of the range rather than its rows: each is
  // merged into the receiver's by the acceptor's rules (PaxosMerge), never
  // put blind (docs/topology.md "Paxos state moves with its range").
  bool paxos = false;
};

// Merges a streamed Paxos state (its key and stored bytes) into this
// shard's acceptor; `done` gets OK once the merge is durable, DataLoss for
// bytes that do not parse, or another error (try again).
using PaxosMerge =
    std::function<void(const std::string& key, const std::string& stored, std::function<void(absl::Status)> done)>;

// Where a stream's progress is kept.
std::string StreamProgressKey(const std::string& name);

class RangeStream : public std::enable_shared_from_this<RangeStream> {
 public:
  // `done`: OK once every pair of the range is stored and synced, or why
  // the stream cannot go on (a pair that does not check out, or one
  // outside the range). A disk that refuses, or a source that does not
  // answer, is tried again, forever: the caller decides when to give up
  // (Stop).
  RangeStream(ShardEnv env, uint64_t id, StreamSpec spec, std::function<void(absl::Status)> done,
              PaxosMerge merge = nullptr);

  void Start();
  void OnChunk(const StreamChunk& chunk);
  void Stop();

  uint64_t id() const { return id_; }
  // Pairs this stream stored in this life.
  uint64_t pairs_stored() const { return pairs_stored_; }
  uint64_t bytes_stored() const { return bytes_stored_; }

 private:
  void OnProgressRead(absl::StatusOr<std::optional<std::string>> stored);
  void Ask();
  void AskLater();
  bool InRange(const std::string& key) const;
  absl::Status Check(const StreamChunk& chunk) const;
  void Store(const StreamChunk& chunk);
  void MergePaxos(const StreamChunk& chunk);
  // Writes `batch` with the stream's progress (`last`), synced, then asks
  // for more or finishes.
  void WriteProgress(WriteBatch batch, std::string last, bool exhausted, int pairs, uint64_t bytes);
  static uint64_t BytesOf(const StreamChunk& chunk);
  void Finish(absl::Status status);

  ShardEnv env_;
  const uint64_t id_;
  const StreamSpec spec_;
  std::function<void(absl::Status)> done_;
  PaxosMerge merge_;
  const bool small_chunks_;  // asks for two pairs a chunk (Buggify)
  uint64_t merges_begun_ = 0;  // chunks whose merges began: an older one's answers no longer count
  std::string last_key_;  // received (buffered or stored); the next chunk continues from it
  std::string durable_key_;  // stored and its progress synced; empty: nothing yet
  WriteBatch buffered_;  // received pairs not yet ingested, in key order
  uint64_t buffered_bytes_ = 0;
  uint64_t pairs_stored_ = 0;
  uint64_t bytes_stored_ = 0;
  bool storing_ = false;  // a chunk is on its way to disk
  bool finished_ = false;
  TimerId retry_timer_ = 0;
};

}  // namespace charybdis
