// Streaming a token range between two shards (core/replica/range_stream.h,
// stream_source.h), stepped by hand: the test carries each request to the
// source and each chunk back, and completes each disk operation.

#include "core/replica/range_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "core/data/checked_value.h"
#include "core/data/storage_codec.h"
#include "core/replica/stream_source.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

// The Paxos view of an acceptor that never saw a repair: as stored.
StreamedPaxosView AsStored() {
  return [](const std::string&, const std::string&, const std::string& stored) { return std::optional<std::string>(stored); };
}

using testing::FakeEnv;

class AlwaysBuggify final : public Buggify {
 public:
  bool Fires(std::string_view) override { return true; }
};

class RangeStreamTest : public ::testing::Test {
 protected:
  RangeStreamTest() : source_(Address{1, 0}), receiver_(Address{2, 0}) {
    receiver_.env.probes = &probes_;
    // 40 partitions of two tables on the source, two rows each.
    for (int i = 0; i < 40; i++) {
      const std::string key = "k" + std::to_string(i);
      tokens_.push_back(TokenOf(key));
      for (const std::string table : {"t", "u"}) {
        Partition partition;
        partition.rows["r1"].cells["a"] = Cell{10, false, "v" + std::to_string(i), 0, 0};
        partition.rows["r2"].cells["a"] = Cell{11, false, "w", 0, 0};
        partition.rows["r2"].tombstone = 5;
        WriteBatch batch;
        storage_codec::AddMutation(table, key, partition, batch);
        for (auto& put : batch.operations) source_.storage.contents()[put.key] = *put.value;
      }
    }
    std::sort(tokens_.begin(), tokens_.end());
    spec_ = StreamSpec{"range-1", "t", tokens_[10], tokens_[29], 1};
  }

  std::shared_ptr<RangeStream> NewStream() {
    return std::make_shared<RangeStream>(receiver_.env, 7, spec_, [this](absl::Status status) {
      ASSERT_FALSE(done_.has_value()) << "done twice";
      done_ = status;
    });
  }

  // Carries requests and chunks both ways until nothing moves, completing
  // at most `steps` disk operations of the receiver.
  void Pump(RangeStream& stream, int steps = 1 << 30) {
    for (bool moved = true; moved;) {
      moved = false;
      for (Envelope& request : receiver_.network.TakeSent()) {
        request.set_from_node(2);
        AnswerStreamRequest(source_.env, request, AsStored());
        moved = true;
      }
      source_.storage.CompleteAll();
      for (Envelope& chunk : source_.network.TakeSent()) {
        stream.OnChunk(chunk.stream_chunk());
        moved = true;
      }
      while (steps > 0 && receiver_.storage.CompleteNext()) {
        steps--;
        moved = true;
      }
    }
  }

  // The source's stored pairs of the spec's range.
  std::map<std::string, std::string> SourceRange() {
    const StoredRange range = StoredRangeOf(spec_.table, spec_.start_token, spec_.end_token);
    std::map<std::string, std::string> pairs;
    for (const auto& [key, value] : source_.storage.contents()) {
      if (key >= range.begin && key < range.end) pairs[key] = value;
    }
    return pairs;
  }
  std::map<std::string, std::string> ReceiverData() {
    std::map<std::string, std::string> data = receiver_.storage.contents();
    data.erase(StreamProgressKey(spec_.name));
    return data;
  }

  FakeEnv source_;
  FakeEnv receiver_;
  testing::CountingProbes probes_;
  AlwaysBuggify always_;
  std::vector<Token> tokens_;
  StreamSpec spec_;
  std::optional<absl::Status> done_;
};

TEST_F(RangeStreamTest, CopiesTheRangeAsStoredAndNothingElse) {
  const auto expected = SourceRange();
  ASSERT_EQ(expected.size(), 20u * 3);  // 20 partitions: two cells and a row tombstone each
  auto stream = NewStream();
  stream->Start();
  Pump(*stream);
  ASSERT_TRUE(done_.has_value());
  EXPECT_TRUE(done_->ok()) << done_->message();
  EXPECT_EQ(ReceiverData(), expected);
}

TEST_F(RangeStreamTest, SmallChunksResumeAfterAPowerCutAndADoneStreamStaysDone) {
  receiver_.env.buggify = &always_;  // two pairs a chunk
  auto stream = NewStream();
  stream->Start();
  // The progress read, 11 chunks each ingested and then its progress
  // synced, and the 12th chunk ingested.
  Pump(*stream, 1 + 2 * 11 + 1);
  ASSERT_FALSE(done_.has_value());
  receiver_.storage.PowerCut();
  stream->Stop();
  receiver_.network.TakeSent();  // its last request, lost with it
  ASSERT_EQ(ReceiverData().size(), 24u) << "a chunk was not durable once ingested";
  const std::string last_progressed = std::next(ReceiverData().begin(), 21)->first;

  auto resumed = NewStream();
  resumed->Start();
  receiver_.storage.CompleteNext();  // the progress read
  EXPECT_TRUE(probes_.Saw("stream.resumed"));
  std::vector<Envelope> asked = receiver_.network.TakeSent();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].stream_request().after_key(), last_progressed) << "after the last key whose progress was kept";
  EXPECT_EQ(asked[0].stream_request().max_pairs(), 2u);
  asked[0].set_from_node(2);
  AnswerStreamRequest(source_.env, asked[0], AsStored());
  Pump(*resumed);
  ASSERT_TRUE(done_.has_value() && done_->ok());
  EXPECT_EQ(ReceiverData(), SourceRange());

  done_.reset();
  auto again = NewStream();
  again->Start();
  receiver_.storage.CompleteAll();
  EXPECT_TRUE(done_.has_value() && done_->ok());
  EXPECT_TRUE(receiver_.network.TakeSent().empty()) << "a done stream asks for nothing";
}

TEST_F(RangeStreamTest, APairThatDoesNotCheckOutIsRefusedWithItsChunk) {
  auto expected = SourceRange();
  auto corrupt = std::next(expected.begin(), 5);
  corrupt->second[0] ^= 1;
  source_.storage.contents()[corrupt->first] = corrupt->second;
  auto stream = NewStream();
  stream->Start();
  Pump(*stream);
  ASSERT_TRUE(done_.has_value());
  EXPECT_EQ(done_->code(), absl::StatusCode::kDataLoss) << done_->message();
  EXPECT_TRUE(ReceiverData().empty()) << "none of the chunk is stored";
}

TEST_F(RangeStreamTest, LateChunksAreDroppedAndASilentSourceIsAskedAgain) {
  receiver_.env.buggify = &always_;
  auto stream = NewStream();
  stream->Start();
  receiver_.storage.CompleteAll();
  std::vector<Envelope> asked = receiver_.network.TakeSent();
  ASSERT_EQ(asked.size(), 1u);
  asked[0].set_from_node(2);
  AnswerStreamRequest(source_.env, asked[0], AsStored());
  source_.storage.CompleteAll();
  const StreamChunk first = source_.network.TakeSent().at(0).stream_chunk();
  ASSERT_EQ(first.pair_size(), 2);
  stream->OnChunk(first);
  stream->OnChunk(first);  // while the first copy is being stored
  receiver_.storage.CompleteAll();
  stream->OnChunk(first);  // after: it no longer continues from the last key
  EXPECT_EQ(receiver_.storage.pending(), 0u) << "a duplicate is not stored again";
  EXPECT_EQ(receiver_.network.TakeSent().size(), 1u) << "the next chunk asked for once";

  receiver_.clock.Advance(1500 * kMillisecond);  // that request is lost
  EXPECT_TRUE(probes_.Saw("stream.asked_again"));
  asked = receiver_.network.TakeSent();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].stream_request().after_key(), first.pair(1).key());
}

// Fires only the named site.
class BuggifyOne final : public Buggify {
 public:
  explicit BuggifyOne(std::string site) : site_(std::move(site)) {}
  bool Fires(std::string_view site) override { return site == site_; }

 private:
  std::string site_;
};

// Counts ingestions, and fails the first `failures` of them.
class CountedIngestions final : public testing::StorageWrapper {
 public:
  CountedIngestions(Storage& target, int failures) : StorageWrapper(target), failures_(failures) {}
  void Ingest(WriteBatch puts, WriteDone done) override {
    ingested.push_back(puts.operations.size());
    if (failures_ > 0) {
      failures_--;
      return done(absl::UnavailableError("disk write failed"));
    }
    StorageWrapper::Ingest(std::move(puts), std::move(done));
  }
  std::vector<size_t> ingested;  // pairs, per ingestion

 private:
  int failures_;
};

// Chunks are buffered, each next one asked for at once, and ingested as
// one file at the range's end; an ingestion that fails stored nothing, so
// the stream asks again from the last key whose progress is stored.
TEST_F(RangeStreamTest, ChunksAreIngestedAllAtOnceAndAFailedIngestionStartsOverFromTheStoredProgress) {
  BuggifyOne small_chunks("stream.small_chunks");
  CountedIngestions ingestions(receiver_.storage, 1);
  receiver_.env.buggify = &small_chunks;
  receiver_.env.storage = &ingestions;
  auto stream = NewStream();
  stream->Start();
  receiver_.storage.CompleteAll();  // the progress read
  Pump(*stream, 0);  // the source answers; the receiver's disk does nothing
  EXPECT_EQ(ingestions.ingested, std::vector<size_t>{60}) << "the 30 chunks of two were not ingested as one";
  EXPECT_TRUE(probes_.Saw("stream.ingestion_failed"));
  EXPECT_TRUE(ReceiverData().empty());
  receiver_.clock.Advance(1500 * kMillisecond);  // asks again
  std::vector<Envelope> asked = receiver_.network.TakeSent();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].stream_request().after_key(), "") << "not from the start of the range";
  receiver_.network.Send(Address{1, 0}, asked[0]);  // back in the queue for Pump
  Pump(*stream);
  ASSERT_TRUE(done_.has_value() && done_->ok());
  EXPECT_EQ(ingestions.ingested, (std::vector<size_t>{60, 60}));
  EXPECT_EQ(ReceiverData(), SourceRange());
}

// A Paxos stream merges each state through the acceptor; the chunk's
// progress is written only once every merge of it is durable, or a crash
// between could keep the progress and lose a state (an accepted value).
TEST_F(RangeStreamTest, APaxosChunksProgressWaitsForEveryMergeToBeDurable) {
  for (int i = 0; i < 40; i++) {
    const std::string key = storage_codec::PaxosKey("t", "k" + std::to_string(i));
    source_.storage.contents()[key] = checked_value::Seal(key, "state");
  }
  spec_.paxos = true;
  std::vector<std::function<void(absl::Status)>> merges;
  auto stream = std::make_shared<RangeStream>(
      receiver_.env, 7, spec_, [this](absl::Status status) { done_ = status; },
      [&merges](const std::string&, const std::string&, std::function<void(absl::Status)> done) {
        merges.push_back(std::move(done));
      });
  stream->Start();
  Pump(*stream);
  ASSERT_EQ(merges.size(), 20u);  // the range's 20 partitions, in one chunk
  for (size_t i = 0; i + 1 < merges.size(); i++) merges[i](absl::OkStatus());
  Pump(*stream);
  EXPECT_EQ(receiver_.storage.contents().count(StreamProgressKey(spec_.name)), 0u)
      << "progress written before every merge was durable";
  EXPECT_FALSE(done_.has_value());
  merges.back()(absl::OkStatus());
  Pump(*stream);
  ASSERT_TRUE(done_.has_value() && done_->ok());
  EXPECT_EQ(receiver_.storage.contents().count(StreamProgressKey(spec_.name)), 1u);
}

// Holds every ingestion until the test lets it land.
class HeldIngestions final : public testing::StorageWrapper {
 public:
  explicit HeldIngestions(Storage& target) : StorageWrapper(target) {}
  void Ingest(WriteBatch puts, WriteDone done) override { held.emplace_back(std::move(puts), std::move(done)); }
  void LandAll() {
    for (auto& [puts, done] : std::exchange(held, {})) StorageWrapper::Ingest(std::move(puts), std::move(done));
  }
  std::vector<std::pair<WriteBatch, WriteDone>> held;
};

// An ingestion lands in no order with other writes: the progress that
// says its pairs are stored is written only once it is durable.
TEST_F(RangeStreamTest, NoProgressIsWrittenBeforeItsIngestionIsDurable) {
  HeldIngestions ingestions(receiver_.storage);
  receiver_.env.storage = &ingestions;
  auto stream = NewStream();
  stream->Start();
  Pump(*stream);
  ASSERT_EQ(ingestions.held.size(), 1u);
  EXPECT_EQ(receiver_.storage.contents().count(StreamProgressKey(spec_.name)), 0u)
      << "progress written before the pairs it covers were durable";
  EXPECT_FALSE(done_.has_value());
  ingestions.LandAll();
  Pump(*stream);
  ASSERT_TRUE(done_.has_value() && done_->ok());
  EXPECT_EQ(receiver_.storage.contents().count(StreamProgressKey(spec_.name)), 1u);
  EXPECT_EQ(ReceiverData(), SourceRange());
}

// A job stops its other streams when one fails (stream_jobs.cc), perhaps
// while a chunk of theirs is being stored: once stored, the stopped stream
// asks for nothing more and never calls back.
TEST_F(RangeStreamTest, AStreamStoppedWhileItStoresGoesNoFurther) {
  receiver_.env.buggify = &always_;  // two pairs a chunk
  auto stream = NewStream();
  stream->Start();
  receiver_.storage.CompleteAll();  // the progress read
  std::vector<Envelope> asked = receiver_.network.TakeSent();
  ASSERT_EQ(asked.size(), 1u);
  asked[0].set_from_node(2);
  AnswerStreamRequest(source_.env, asked[0], AsStored());
  source_.storage.CompleteAll();
  stream->OnChunk(source_.network.TakeSent().at(0).stream_chunk());
  ASSERT_GT(receiver_.storage.pending(), 0u) << "the chunk is being stored";
  stream->Stop();
  receiver_.storage.CompleteAll();
  receiver_.clock.Advance(5 * kSecond);
  EXPECT_TRUE(receiver_.network.TakeSent().empty()) << "a stopped stream asks for nothing";
  EXPECT_FALSE(done_.has_value()) << "nor calls back";
}

TEST_F(RangeStreamTest, TheSourceAnswersTheEndOfItsRangeAndRefusesANonsenseRequest) {
  Envelope request;
  StreamRequest& asked = *request.mutable_stream_request();
  asked.set_stream_id(3);
  asked.set_table("t");
  asked.set_start_token(tokens_[10]);
  asked.set_end_token(tokens_[29]);
  asked.set_max_pairs(4);
  asked.set_after_key(SourceRange().rbegin()->first);
  request.set_from_node(2);
  AnswerStreamRequest(source_.env, request, AsStored());
  source_.storage.CompleteAll();
  std::vector<Envelope> sent = source_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].stream_chunk().ok());
  EXPECT_TRUE(sent[0].stream_chunk().exhausted());
  EXPECT_EQ(sent[0].stream_chunk().pair_size(), 0);
  EXPECT_EQ(sent[0].to_node(), 2u);

  asked.set_after_key("");
  asked.set_max_pairs(kMaxStreamPairs + 1);
  AnswerStreamRequest(source_.env, request, AsStored());
  source_.storage.CompleteAll();
  sent = source_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].stream_chunk().ok());
}

TEST(StoredRangeTest, CoversTheWholeTokenSpace) {
  const StoredRange all = StoredRangeOf("t", kMinimumToken, std::numeric_limits<Token>::max());
  const std::string key = storage_codec::PartitionPrefix("t", "anything");
  EXPECT_TRUE(key >= all.begin && key < all.end);
  EXPECT_LT(all.end, storage_codec::TablePrefix("t0"));
  const Token token = TokenOf("anything");
  const StoredRange one = StoredRangeOf("t", token, token);
  EXPECT_TRUE(key >= one.begin && key < one.end);
  EXPECT_FALSE(key >= StoredRangeOf("t", token + 1, token + 1).begin);
}

}  // namespace
}  // namespace charybdis
