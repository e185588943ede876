#include "node/peer_link.h"

#include <grpcpp/grpcpp.h>

#include "core/assert.h"

namespace charybdis::node {

namespace {

constexpr auto kReconnectBackOff = std::chrono::milliseconds(100);
// A stream write stops taking envelopes past this (gRPC's default limit on
// a received message is 4 MiB).
constexpr size_t kMaxBatchBytes = 1 << 20;

}  // namespace

// One client stream to the peer. gRPC owns it from StartCall until OnDone,
// where it tells the link and deletes itself.
class PeerLink::Stream final : public grpc::ClientWriteReactor<EnvelopeBatch> {
 public:
  Stream(PeerLink& link, Internode::Stub& stub) : link_(link) {
    stub.async()->Stream(&context_, &closed_, this);
  }
  // Starts the call with its first write (`batch` is taken).
  void Begin(EnvelopeBatch batch) {
    writing_ = std::move(batch);
    StartWrite(&writing_);
    StartCall();
  }
  void Write(EnvelopeBatch batch) {
    writing_ = std::move(batch);
    StartWrite(&writing_);
  }
  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override { link_.OnWriteDone(this, ok); }
  void OnDone(const grpc::Status&) override {
    link_.OnDone(this);
    delete this;
  }

 private:
  PeerLink& link_;
  grpc::ClientContext context_;
  StreamClosed closed_;
  EnvelopeBatch writing_;  // the write in flight: gRPC reads it until OnWriteDone
};

PeerLink::PeerLink(std::string address) : address_(std::move(address)) {
  grpc::ChannelArguments arguments;
  // Notice a dead peer quickly, and reconnect quickly once it is back.
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  // Generous: a loaded 2-core machine must not look like a dead peer.
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  stub_ = Internode::NewStub(grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), arguments));
  broke_at_ = Clock::now() - kReconnectBackOff;
}

PeerLink::~PeerLink() { Stop(); }

void PeerLink::Stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  queue_.clear();
  if (stream_ != nullptr) stream_->Cancel();
  stream_done_.wait(lock, [this] { return stream_ == nullptr; });
}

bool PeerLink::TakeBatch(EnvelopeBatch& batch) {
  size_t bytes = 0;
  while (!queue_.empty()) {
    const size_t next = queue_.front().ByteSizeLong();
    if (batch.envelope_size() > 0 && bytes + next > kMaxBatchBytes) break;
    bytes += next;
    *batch.add_envelope() = std::move(queue_.front());
    queue_.pop_front();
  }
  return batch.envelope_size() > 0;
}

void PeerLink::Send(Envelope message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) return;
  if (stream_ == nullptr && Clock::now() - broke_at_ < kReconnectBackOff) {
    return;  // the peer was unreachable a moment ago: lost, as core/ expects
  }
  if (queue_.size() >= kMaxQueued) queue_.pop_front();  // the oldest is lost
  queue_.push_back(std::move(message));
  if (writing_) return;  // OnWriteDone takes it
  EnvelopeBatch batch;
  writing_ = TakeBatch(batch);
  // The write starts under our lock: with no write outstanding, gRPC could
  // otherwise finish the call (and delete the stream) between our unlock
  // and the write. gRPC 1.51 never runs a reaction inside StartWrite or
  // StartCall (it schedules them), so its callbacks cannot deadlock on it.
  if (stream_ == nullptr) {
    stream_ = new Stream(*this, *stub_);
    stream_->Begin(std::move(batch));
  } else {
    stream_->Write(std::move(batch));
  }
}

void PeerLink::OnWriteDone(Stream* stream, bool ok) {
  EnvelopeBatch batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHARYBDIS_ASSERT(stream == stream_ && writing_);
    // A failed write means the stream is broken: OnDone follows, and until
    // then Send only queues (writing_ stays set).
    if (!ok) return;
    writing_ = !stopping_ && TakeBatch(batch);
    if (!writing_) return;
  }
  stream->Write(std::move(batch));
}

void PeerLink::OnDone(Stream* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  CHARYBDIS_ASSERT(stream == stream_);
  stream_ = nullptr;
  writing_ = false;
  broke_at_ = Clock::now();
  queue_.clear();  // the peer is unreachable: what was queued is stale
  stream_done_.notify_all();
}

}  // namespace charybdis::node
