#include "core/replica/range_stream.h"

#include "absl/strings/str_cat.h"
#include "core/data/checked_value.h"
#include "core/env/assert.h"
#include "core/env/probe.h"
#include "core/replica/stream_source.h"

namespace charybdis {

namespace {

// How long a receiver waits for a chunk before it asks again.
constexpr Nanos kStreamRetry = 1000 * kMillisecond;
// Progress values: a marker, then the last key stored.
constexpr char kInProgress = 'p';
constexpr char kDone = 'd';

}  // namespace

std::string StreamProgressKey(const std::string& name) { return absl::StrCat("system/stream/", name); }

RangeStream::RangeStream(ShardEnv env, uint64_t id, StreamSpec spec, std::function<void(absl::Status)> done)
    : env_(env), id_(id), spec_(std::move(spec)), done_(std::move(done)) {
  CHARYBDIS_ASSERT(id_ != 0);
  CHARYBDIS_ASSERT(!spec_.name.empty() && !spec_.table.empty());
  CHARYBDIS_ASSERT(spec_.start_token <= spec_.end_token);
  CHARYBDIS_ASSERT(spec_.source != env_.self.node);
  CHARYBDIS_ASSERT(done_ != nullptr);
}

void RangeStream::Start() {
  env_.storage->Get(StreamProgressKey(spec_.name),
                    [self = shared_from_this()](absl::StatusOr<std::optional<std::string>> stored) {
                      self->OnProgressRead(std::move(stored));
                    });
}

void RangeStream::OnProgressRead(absl::StatusOr<std::optional<std::string>> stored) {
  if (finished_) return;
  if (!stored.ok()) {  // the disk refused the read: try again later
    retry_timer_ = env_.clock->After(kStreamRetry, [self = weak_from_this()] {
      if (std::shared_ptr<RangeStream> stream = self.lock(); stream && !stream->finished_) stream->Start();
    });
    return;
  }
  if (stored->has_value()) {
    const std::string key = StreamProgressKey(spec_.name);
    std::optional<std::string_view> progress = checked_value::Open(key, **stored);
    if (!progress || progress->empty() || (progress->front() != kInProgress && progress->front() != kDone)) {
      // Start over: every pair is a blind put, so copying again is safe.
      CHARYBDIS_PROBE(env_.probes, "storage.corrupt_stream_progress");
    } else if (progress->front() == kDone) {
      return Finish(absl::OkStatus());
    } else {
      last_key_ = std::string(progress->substr(1));
      CHARYBDIS_PROBE(env_.probes, "stream.resumed");
    }
  }
  Ask();
}

void RangeStream::Ask() {
  CHARYBDIS_ASSERT(!finished_ && !storing_);
  Envelope message;
  StreamRequest& request = *message.mutable_stream_request();
  request.set_stream_id(id_);
  request.set_table(spec_.table);
  request.set_start_token(spec_.start_token);
  request.set_end_token(spec_.end_token);
  request.set_after_key(last_key_);
  // Small chunks now and then, so that resuming mid-range is common.
  request.set_max_pairs(env_.buggify->Fires("stream.small_chunks") ? 2 : kMaxStreamPairs);
  env_.network->Send(Address{spec_.source, env_.self.shard}, std::move(message));
  AskLater();
}

void RangeStream::AskLater() {
  env_.clock->Cancel(retry_timer_);
  retry_timer_ = env_.clock->After(kStreamRetry, [self = weak_from_this()] {
    std::shared_ptr<RangeStream> stream = self.lock();
    if (stream == nullptr || stream->finished_ || stream->storing_) return;
    CHARYBDIS_PROBE(stream->env_.probes, "stream.asked_again");
    stream->Ask();
  });
}

absl::Status RangeStream::Check(const StreamChunk& chunk) const {
  const StoredRange range = StoredRangeOf(spec_.table, spec_.start_token, spec_.end_token);
  std::string previous = last_key_;
  for (const StoredPair& pair : chunk.pair()) {
    if (pair.key() < range.begin || pair.key() >= range.end || pair.key() <= previous) {
      return absl::InternalError(absl::StrCat("stream ", spec_.name, ": node ", spec_.source,
                                              " sent a key outside the range or out of order"));
    }
    if (!checked_value::Open(pair.key(), pair.value())) {
      return absl::DataLossError(absl::StrCat("stream ", spec_.name, ": node ", spec_.source,
                                              " holds a stored pair that does not check out; stream from another"));
    }
    previous = pair.key();
  }
  return absl::OkStatus();
}

void RangeStream::OnChunk(const StreamChunk& chunk) {
  CHARYBDIS_ASSERT(chunk.stream_id() == id_);
  // A late or duplicated chunk, or one of an earlier life's stream with
  // this id: the one awaited is of this range and continues from last_key_.
  if (finished_ || storing_ || chunk.after_key() != last_key_ || chunk.table() != spec_.table ||
      chunk.start_token() != spec_.start_token || chunk.end_token() != spec_.end_token) {
    return;
  }
  if (!chunk.ok()) return;  // the source's disk refused: the retry asks again
  if (absl::Status checked = Check(chunk); !checked.ok()) return Finish(checked);
  Store(chunk);
}

void RangeStream::Store(const StreamChunk& chunk) {
  WriteBatch batch;
  for (const StoredPair& pair : chunk.pair()) batch.Put(pair.key(), pair.value());
  const std::string last = chunk.pair().empty() ? last_key_ : chunk.pair().rbegin()->key();
  const std::string key = StreamProgressKey(spec_.name);
  batch.Put(key, checked_value::Seal(key, std::string(1, chunk.exhausted() ? kDone : kInProgress) + last));
  storing_ = true;
  const bool exhausted = chunk.exhausted();
  const int pairs = chunk.pair_size();
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [self = shared_from_this(), last, exhausted, pairs](absl::Status stored) {
                        self->storing_ = false;
                        if (self->finished_) return;
                        if (!stored.ok()) return self->AskLater();  // nothing of it was stored
                        CHARYBDIS_ASSERT(last >= self->last_key_);
                        self->last_key_ = last;
                        self->pairs_stored_ += pairs;
                        if (exhausted) return self->Finish(absl::OkStatus());
                        self->Ask();
                      });
}

void RangeStream::Stop() {
  if (finished_) return;
  finished_ = true;
  env_.clock->Cancel(retry_timer_);
}

void RangeStream::Finish(absl::Status status) {
  CHARYBDIS_ASSERT(!finished_);
  Stop();
  done_(std::move(status));
}

}  // namespace charybdis
