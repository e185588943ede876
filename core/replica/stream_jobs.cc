#include "core/replica/stream_jobs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis {

namespace {

absl::Status RequestProblem(const StreamRanges& request, NodeId self) {
  if (request.name().empty()) return absl::InvalidArgumentError("a stream request needs a name");
  if (request.source() == 0 || request.source() == self) {
    return absl::InvalidArgumentError("a stream request needs a source other than the receiver");
  }
  if (request.range_size() == 0) return absl::InvalidArgumentError("a stream request needs a range");
  for (const StreamRanges::Range& range : request.range()) {
    if (range.start_token() > range.end_token()) {
      return absl::InvalidArgumentError("a stream request's range needs start_token <= end_token");
    }
  }
  return absl::OkStatus();
}

}  // namespace

StreamJobs::StreamJobs(ShardEnv env, Tables tables, PaxosMerge merge, ShardMetrics& metrics)
    : env_(env), tables_(std::move(tables)), merge_(std::move(merge)), metrics_(metrics) {
  CHARYBDIS_ASSERT(tables_ != nullptr && merge_ != nullptr);
}

void StreamJobs::OnRequest(const Envelope& message) {
  const StreamRanges& request = message.stream_ranges();
  const Address requester{message.from_node(), message.from_shard()};
  if (absl::Status problem = RequestProblem(request, env_.self.node); !problem.ok()) {
    return Answer(requester, request.request_id(), request.name(), problem, 0, 0);
  }
  for (const auto& [id, job] : jobs_) {
    if (job.name == request.name()) {
      return Answer(requester, request.request_id(), request.name(),
                    absl::AlreadyExistsError(absl::StrCat("streams named ", request.name(), " are running")), 0, 0);
    }
  }
  const uint64_t job_id = ++last_id_;
  Job& job = jobs_[job_id];
  job.requester = requester;
  job.request_id = request.request_id();
  job.name = request.name();
  size_t added = 0;
  for (const std::string& table : tables_()) {
    for (const StreamRanges::Range& range : request.range()) {
      for (const bool paxos : {false, true}) {
        StreamSpec spec{absl::StrCat(request.name(), paxos ? "/paxos/" : "/", table, "/", range.start_token(), "/",
                                     range.end_token()),
                        table, range.start_token(), range.end_token(), request.source(), paxos};
        const uint64_t stream_id = ++last_id_;
        auto stream = std::make_shared<RangeStream>(
            env_, stream_id, std::move(spec),
            [this, job_id, stream_id](absl::Status status) { OnStreamDone(job_id, stream_id, std::move(status)); },
            paxos ? merge_ : nullptr);
        streams_[stream_id] = std::move(stream);
        job.running.insert(stream_id);
        waiting_.push_back(stream_id);
        added++;
      }
    }
  }
  CHARYBDIS_ASSERT(added > 0);  // every shard knows the logs' tables
  StartWaiting();
}

void StreamJobs::StartWaiting() {
  while (started_.size() < kMaxRunningStreams && !waiting_.empty()) {
    const uint64_t stream_id = waiting_.front();
    waiting_.pop_front();
    auto stream = streams_.find(stream_id);
    if (stream == streams_.end()) continue;  // its job stopped
    const bool fresh = started_.insert(stream_id).second;
    CHARYBDIS_ASSERT(fresh);
    const std::shared_ptr<RangeStream> starting = stream->second;
    starting->Start();
  }
  CHARYBDIS_ASSERT(started_.size() <= kMaxRunningStreams);
}

void StreamJobs::OnChunk(const StreamChunk& chunk) {
  auto it = streams_.find(chunk.stream_id());
  if (it == streams_.end()) return;  // of a stream that ended, or of an earlier life
  const std::shared_ptr<RangeStream> stream = it->second;  // it may end, and leave streams_, in there
  stream->OnChunk(chunk);
}

void StreamJobs::OnStreamDone(uint64_t job_id, uint64_t stream_id, absl::Status status) {
  auto stream = streams_.find(stream_id);
  CHARYBDIS_ASSERT(stream != streams_.end());
  auto job = jobs_.find(job_id);
  CHARYBDIS_ASSERT(job != jobs_.end());
  CHARYBDIS_ASSERT(job->second.running.count(stream_id) == 1);
  job->second.pairs += stream->second->pairs_stored();
  job->second.bytes += stream->second->bytes_stored();
  metrics_.stream_pairs_received += stream->second->pairs_stored();
  metrics_.stream_bytes_received += stream->second->bytes_stored();
  const size_t was_running = started_.erase(stream_id);
  CHARYBDIS_ASSERT(was_running == 1);  // a waiting stream never calls back
  job->second.running.erase(stream_id);
  streams_.erase(stream);
  if (status.ok() && !job->second.running.empty()) return StartWaiting();
  for (uint64_t other : job->second.running) {
    streams_.at(other)->Stop();  // Stop does not call back
    streams_.erase(other);
    started_.erase(other);
  }
  Answer(job->second.requester, job->second.request_id, job->second.name, status, job->second.pairs,
         job->second.bytes);
  jobs_.erase(job);
  StartWaiting();
}

void StreamJobs::Answer(const Address& to, uint64_t request_id, const std::string& name, const absl::Status& status,
                        uint64_t pairs, uint64_t bytes) {
  Envelope reply;
  StreamRangesDone& done = *reply.mutable_stream_ranges_done();
  done.set_request_id(request_id);
  done.set_name(name);
  done.set_ok(status.ok());
  done.set_message(std::string(status.message()));
  done.set_pairs(pairs);
  done.set_bytes(bytes);
  env_.network->Send(to, std::move(reply));
}

}  // namespace charybdis
