// A shard's stream jobs (core/replica/stream_jobs.h), stepped by hand: the
// test carries each stream request to the source and each chunk back.
// However many ranges a request names, at most kMaxRunningStreams streams
// run at once on the shard (each may buffer a file's worth), the rest wait
// their turn, and all of them are done before the requester is answered.

#include "core/replica/stream_jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/data/storage_codec.h"
#include "core/replica/stream_source.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

// The Paxos view of an acceptor that never saw a repair: as stored.
StreamedPaxosView AsStored() {
  return [](const std::string&, const std::string&, const std::string& stored) { return std::optional<std::string>(stored); };
}

class StreamJobsTest : public ::testing::Test {
 protected:
  StreamJobsTest()
      : source_(Address{1, 0}),
        receiver_(Address{2, 0}),
        jobs_(receiver_.env, [] { return std::vector<std::string>{"t"}; },
              [](const std::string&, const std::string&, std::function<void(absl::Status)> done) {
                done(absl::OkStatus());
              },
              metrics_) {
    // 60 partitions on the source, one row each.
    for (int i = 0; i < 60; i++) {
      const std::string key = "k" + std::to_string(i);
      tokens_.push_back(TokenOf(key));
      Partition partition;
      partition.rows["r"].cells["a"] = Cell{10, false, "v", 0, 0};
      WriteBatch batch;
      storage_codec::AddMutation("t", key, partition, batch);
      for (auto& put : batch.operations) source_.storage.contents()[put.key] = *put.value;
    }
    std::sort(tokens_.begin(), tokens_.end());
  }

  // Asks for `ranges` ranges of ten partitions each (two streams apiece:
  // rows and Paxos states).
  void Request(int ranges) {
    Envelope message;
    message.set_from_node(3);
    StreamRanges& request = *message.mutable_stream_ranges();
    request.set_request_id(9);
    request.set_name("job");
    request.set_source(1);
    for (int i = 0; i < ranges; i++) {
      StreamRanges::Range& range = *request.add_range();
      range.set_start_token(tokens_[10 * i]);
      range.set_end_token(tokens_[10 * i + 9]);
    }
    jobs_.OnRequest(message);
  }

  // One round: the receiver's disk completes, its requests reach the
  // source, and the chunks come back. Returns the streams that asked.
  std::set<uint64_t> Round() {
    receiver_.storage.CompleteAll();
    std::set<uint64_t> asking;
    for (Envelope& sent : receiver_.network.TakeSent()) {
      if (!sent.has_stream_request()) {
        answers_.push_back(sent);
        continue;
      }
      asking.insert(sent.stream_request().stream_id());
      sent.set_from_node(2);
      AnswerStreamRequest(source_.env, sent, AsStored());
    }
    source_.storage.CompleteAll();
    for (Envelope& chunk : source_.network.TakeSent()) jobs_.OnChunk(chunk.stream_chunk());
    return asking;
  }

  testing::FakeEnv source_;
  testing::FakeEnv receiver_;
  ShardMetrics metrics_;
  StreamJobs jobs_;
  std::vector<Token> tokens_;
  std::vector<Envelope> answers_;
};

TEST_F(StreamJobsTest, AtMostFourStreamsRunAtOnceAndEveryOneIsDoneBeforeTheAnswer) {
  Request(6);  // 12 streams
  std::set<uint64_t> asked_ever;
  size_t most_at_once = 0;
  for (int round = 0; round < 100 && answers_.empty(); round++) {
    const std::set<uint64_t> asking = Round();
    most_at_once = std::max(most_at_once, asking.size());
    asked_ever.insert(asking.begin(), asking.end());
  }
  EXPECT_EQ(most_at_once, kMaxRunningStreams) << "streams ran all at once, or too few did";
  EXPECT_EQ(asked_ever.size(), 12u) << "a waiting stream never started";
  ASSERT_EQ(answers_.size(), 1u);
  const StreamRangesDone& done = answers_[0].stream_ranges_done();
  EXPECT_TRUE(done.ok()) << done.message();
  EXPECT_EQ(done.pairs(), 60u) << "not every partition's row was stored";
  EXPECT_FALSE(jobs_.busy());
}

TEST_F(StreamJobsTest, AFailedStreamStopsTheJobAndItsWaitingStreamsNeverStart) {
  // A flipped bit in the first range's only data on the source.
  for (auto& [key, value] : source_.storage.contents()) {
    if (key >= StoredRangeOf("t", tokens_[0], tokens_[9]).begin) {
      value[0] ^= 1;
      break;
    }
  }
  Request(6);
  for (int round = 0; round < 100 && answers_.empty(); round++) Round();
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_FALSE(answers_[0].stream_ranges_done().ok());
  EXPECT_FALSE(jobs_.busy());
  for (int round = 0; round < 5; round++) EXPECT_TRUE(Round().empty()) << "a stream of the stopped job asked";
}

}  // namespace
}  // namespace charybdis
