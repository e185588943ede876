#pragma once

// A shard's streams (range_stream.h), run for StreamRanges requests: two
// streams per table the shard knows and range asked for, its rows and its
// Paxos states, at most kMaxRunningStreams at once on the shard (each
// buffers up to a file's worth: that bounds the shard's memory), the
// others waiting their turn in the order asked. The
// requester is answered once every stream is done, or the first one
// failed (the others then stop). Streams are named after the request's
// name, the table and the range, so the same request sent again after a
// crash resumes them, and one that is done answers at once.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/env/shard_env.h"
#include "core/replica/range_stream.h"
#include "core/telemetry/metrics.h"
#include "proto/messages.pb.h"

namespace charybdis {

// Streams running at once on a shard, of all its jobs.
inline constexpr size_t kMaxRunningStreams = 4;

class StreamJobs {
 public:
  // The tables whose data streams: every storage table the shard knows.
  using Tables = std::function<std::vector<std::string>()>;
  // `merge`: how streamed Paxos states reach this shard's acceptor.
  // `metrics`: counts the pairs and bytes streams stored.
  StreamJobs(ShardEnv env, Tables tables, PaxosMerge merge, ShardMetrics& metrics);

  void OnRequest(const Envelope& message);
  void OnChunk(const StreamChunk& chunk);
  // Whether a stream is coming into this shard.
  bool busy() const { return !jobs_.empty(); }

 private:
  struct Job {
    Address requester;
    uint64_t request_id = 0;
    std::string name;
    std::set<uint64_t> running;  // stream ids not done, started or waiting
    uint64_t pairs = 0;
    uint64_t bytes = 0;
  };
  void OnStreamDone(uint64_t job_id, uint64_t stream_id, absl::Status status);
  // Starts waiting streams while fewer than kMaxRunningStreams run.
  void StartWaiting();
  void Answer(const Address& to, uint64_t request_id, const std::string& name, const absl::Status& status,
              uint64_t pairs, uint64_t bytes);

  ShardEnv env_;
  Tables tables_;
  PaxosMerge merge_;
  ShardMetrics& metrics_;
  uint64_t last_id_ = 0;  // streams and jobs
  std::map<uint64_t, std::shared_ptr<RangeStream>> streams_;  // started or waiting
  std::set<uint64_t> started_;  // of streams_, those running
  std::deque<uint64_t> waiting_;  // oldest first; a stopped job's stay until their turn, then are skipped
  std::map<uint64_t, Job> jobs_;
};

}  // namespace charybdis
