#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "proto/node.grpc.pb.h"

namespace charybdis::node {

// The outbound half of the internode connection to one peer: one gRPC
// client stream, written through gRPC's callback API by whichever thread
// sends (a shard's), with no thread of its own in between: a message that
// finds no write in flight starts one at once; messages that arrive while
// a write is in flight all go in the next one. A message is
// fire-and-forget: one written to a stream that then breaks, queued
// beyond the bound, or sent during the short back-off after a stream
// broke, is lost (core/ copes). The first message after the back-off
// opens a new stream.
class PeerLink {
 public:
  explicit PeerLink(std::string address);
  PeerLink(const PeerLink&) = delete;
  PeerLink& operator=(const PeerLink&) = delete;
  ~PeerLink();

  // Cancels the stream and waits until gRPC is done with it.
  void Stop();
  void Send(Envelope message);

 private:
  class Stream;
  using Clock = std::chrono::steady_clock;

  // Called with mutex_ held: moves queued messages into `batch` (up to the
  // size cap, or one message if it alone is larger). Returns whether there
  // were any.
  bool TakeBatch(EnvelopeBatch& batch);
  // From the stream's callbacks.
  void OnWriteDone(Stream* stream, bool ok);
  void OnDone(Stream* stream);

  static constexpr size_t kMaxQueued = 100000;

  const std::string address_;
  std::unique_ptr<Internode::Stub> stub_;
  std::mutex mutex_;
  std::condition_variable stream_done_;
  std::deque<Envelope> queue_;   // guarded by mutex_
  bool stopping_ = false;        // guarded by mutex_
  Stream* stream_ = nullptr;     // the open stream, if any; guarded by mutex_
  bool writing_ = false;         // a write of stream_ is in flight; guarded by mutex_
  Clock::time_point broke_at_;   // when the last stream broke; guarded by mutex_
};

}  // namespace charybdis::node
