#include "core/replica/range_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/data/checked_value.h"
#include "core/env/assert.h"
#include "core/env/probe.h"
#include "core/replica/stream_source.h"

namespace charybdis {

namespace {

// How long a receiver waits for a chunk before it asks again.
constexpr Nanos kStreamRetry = 1000 * kMillisecond;
// Chunks are buffered until this many bytes, then ingested as one file: a
// chunk's worth (2 MiB of 4 KiB values) per file is many small files to
// compact, and a whole range held in memory is unbounded and lost whole to
// a crash. With kMaxRunningStreams a shard buffers 64 MiB at most.
constexpr uint64_t kIngestBytes = 16ull << 20;
// Progress values: a marker, then the last key stored.
constexpr char kInProgress = 'p';
constexpr char kDone = 'd';

}  // namespace

std::string StreamProgressKey(const std::string& name) { return absl::StrCat("system/stream/", name); }

RangeStream::RangeStream(ShardEnv env, uint64_t id, StreamSpec spec, std::function<void(absl::Status)> done,
                         PaxosMerge merge)
    : env_(env),
      id_(id),
      spec_(std::move(spec)),
      done_(std::move(done)),
      merge_(std::move(merge)),
      // Now and then a stream of many small chunks, each perhaps stored on
      // its own (stream.ingest_each_chunk), so that resuming mid-range is
      // common and so are buffers of several chunks.
      small_chunks_(env.buggify->Fires("stream.small_chunks")) {
  CHARYBDIS_ASSERT(spec_.paxos == (merge_ != nullptr));
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
      durable_key_ = last_key_;
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
  request.set_paxos(spec_.paxos);
  request.set_max_pairs(small_chunks_ ? 2 : kMaxStreamPairs);
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

// Whether a streamed key belongs to this stream: a data key of the range,
// or a Paxos key of the table whose partition lies in it.
bool RangeStream::InRange(const std::string& key) const {
  if (!spec_.paxos) {
    const StoredRange range = StoredRangeOf(spec_.table, spec_.start_token, spec_.end_token);
    return key >= range.begin && key < range.end;
  }
  return IsPaxosKeyInRange(key, spec_.table, spec_.start_token, spec_.end_token);
}

absl::Status RangeStream::Check(const StreamChunk& chunk) const {
  std::string previous = last_key_;
  if (spec_.paxos && !chunk.pair().empty() && chunk.pair().rbegin()->key() > chunk.scanned_to()) {
    return absl::InternalError(absl::StrCat("stream ", spec_.name, ": node ", spec_.source,
                                            " sent a key beyond what it scanned"));
  }
  for (const StoredPair& pair : chunk.pair()) {
    if (!InRange(pair.key()) || pair.key() <= previous) {
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

// The bytes of a chunk's pairs, keys and values: what progress reports.
uint64_t RangeStream::BytesOf(const StreamChunk& chunk) {
  uint64_t bytes = 0;
  for (const StoredPair& pair : chunk.pair()) bytes += pair.key().size() + pair.value().size();
  return bytes;
}

void RangeStream::OnChunk(const StreamChunk& chunk) {
  CHARYBDIS_ASSERT(chunk.stream_id() == id_);
  // A late or duplicated chunk, or one of an earlier life's stream with
  // this id: the one awaited is of this range and continues from last_key_.
  if (finished_ || storing_ || chunk.after_key() != last_key_ || chunk.table() != spec_.table ||
      chunk.start_token() != spec_.start_token || chunk.end_token() != spec_.end_token ||
      chunk.paxos() != spec_.paxos) {
    return;
  }
  if (!chunk.ok()) return;  // the source's disk refused: the retry asks again
  if (absl::Status checked = Check(chunk); !checked.ok()) return Finish(checked);
  if (spec_.paxos) return MergePaxos(chunk);
  Store(chunk);
}

// Buffered, and the next chunk asked for at once, until a file's worth or
// the range's end; then ingested (off the log: client writes do not queue
// behind it), and only then is the progress written.
void RangeStream::Store(const StreamChunk& chunk) {
  for (const StoredPair& pair : chunk.pair()) buffered_.Put(pair.key(), pair.value());
  buffered_bytes_ += BytesOf(chunk);
  if (!chunk.pair().empty()) last_key_ = chunk.pair().rbegin()->key();
  // A file per chunk now and then, so that progress lands mid-range.
  if (!chunk.exhausted() && buffered_bytes_ < kIngestBytes && !env_.buggify->Fires("stream.ingest_each_chunk")) {
    return Ask();
  }
  if (buffered_.operations.empty()) return WriteProgress(WriteBatch(), last_key_, chunk.exhausted(), 0, 0);
  storing_ = true;
  const int pairs = static_cast<int>(buffered_.operations.size());
  const uint64_t bytes = std::exchange(buffered_bytes_, 0);
  env_.storage->Ingest(std::exchange(buffered_, WriteBatch()),
                       [self = shared_from_this(), last = last_key_, exhausted = chunk.exhausted(), pairs,
                        bytes](absl::Status ingested) {
                         if (self->finished_) return;
                         if (!ingested.ok()) {
                           // Nothing of it was stored: ask again after the last key that was.
                           CHARYBDIS_PROBE(self->env_.probes, "stream.ingestion_failed");
                           self->storing_ = false;
                           self->last_key_ = self->durable_key_;
                           return self->AskLater();
                         }
                         self->WriteProgress(WriteBatch(), last, exhausted, pairs, bytes);
                       });
}

// Each state through the acceptor, all at once; the progress is written
// once every merge is durable (a crash before redoes them: merging a state
// twice changes nothing).
void RangeStream::MergePaxos(const StreamChunk& chunk) {
  storing_ = true;
  const uint64_t merge = ++merges_begun_;
  struct Pending {
    size_t left = 0;
    absl::Status status;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = static_cast<size_t>(chunk.pair_size()) + 1;  // + 1: released below
  auto merged = [self = shared_from_this(), merge, pending, last = chunk.scanned_to(), exhausted = chunk.exhausted(),
                 pairs = chunk.pair_size(), bytes = BytesOf(chunk)](absl::Status status) {
    if (!status.ok() && pending->status.ok()) pending->status = status;
    if (--pending->left > 0 || self->finished_ || merge != self->merges_begun_) return;
    self->merges_begun_++;  // answered: the timeout below no longer applies
    if (absl::IsDataLoss(pending->status)) return self->Finish(pending->status);
    if (!pending->status.ok()) {
      self->storing_ = false;  // a disk refused: merge this chunk again
      return self->AskLater();
    }
    self->WriteProgress(WriteBatch(), last, exhausted, pairs, bytes);
  };
  for (const StoredPair& pair : chunk.pair()) merge_(pair.key(), pair.value(), merged);
  merged(absl::OkStatus());
  // An acceptor that cannot load a partition's state drops the merge
  // unanswered: merge the chunk again after a while.
  env_.clock->After(5 * kStreamRetry, [self = weak_from_this(), merge] {
    std::shared_ptr<RangeStream> stream = self.lock();
    if (stream == nullptr || stream->finished_ || !stream->storing_ || merge != stream->merges_begun_) return;
    stream->merges_begun_++;  // its answers no longer count
    stream->storing_ = false;
    stream->Ask();
  });
}

void RangeStream::WriteProgress(WriteBatch batch, std::string last, bool exhausted, int pairs, uint64_t bytes) {
  const std::string key = StreamProgressKey(spec_.name);
  batch.Put(key, checked_value::Seal(key, std::string(1, exhausted ? kDone : kInProgress) + last));
  storing_ = true;
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [self = shared_from_this(), last, exhausted, pairs, bytes](absl::Status stored) {
                        self->storing_ = false;
                        if (self->finished_) return;
                        // Nothing of it was stored (what an ingestion
                        // before it stored is, and its end asked after).
                        if (!stored.ok()) return self->AskLater();
                        CHARYBDIS_ASSERT(last >= self->durable_key_);
                        CHARYBDIS_ASSERT(self->spec_.paxos || last == self->last_key_);  // no chunk taken while storing
                        self->last_key_ = last;
                        self->durable_key_ = last;
                        self->pairs_stored_ += pairs;
                        self->bytes_stored_ += bytes;
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
