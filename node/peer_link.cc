#include "node/peer_link.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

namespace charybdis::node {

namespace {

constexpr auto kReconnectBackOff = std::chrono::milliseconds(100);
// A stream write stops taking envelopes past this (gRPC's default limit on
// a received message is 4 MiB).
constexpr size_t kMaxBatchBytes = 1 << 20;

}  // namespace

PeerLink::PeerLink(std::string address) : address_(std::move(address)) {}

PeerLink::~PeerLink() { Stop(); }

void PeerLink::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void PeerLink::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (active_context_ != nullptr) active_context_->TryCancel();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeerLink::Send(Envelope message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    if (queue_.size() >= kMaxQueued) queue_.pop_front();  // the oldest is lost
    queue_.push_back(std::move(message));
  }
  wake_.notify_one();
}

void PeerLink::Loop() {
  grpc::ChannelArguments arguments;
  // Notice a dead peer quickly, and reconnect quickly once it is back.
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  // Generous: a loaded 2-core machine must not look like a dead peer.
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  auto channel = grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), arguments);
  auto stub = Internode::NewStub(channel);
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
    }
    Pump(*stub);
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopping_) return;
    // The peer is unreachable: what was queued meanwhile is stale.
    queue_.clear();
    wake_.wait_for(lock, kReconnectBackOff, [this] { return stopping_; });
  }
}

void PeerLink::Pump(Internode::Stub& stub) {
  grpc::ClientContext context;
  StreamClosed closed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    active_context_ = &context;
  }
  std::unique_ptr<grpc::ClientWriter<EnvelopeBatch>> writer = stub.Stream(&context, &closed);
  std::deque<Envelope> queued;
  bool broken = false;
  while (!broken) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
      queued.swap(queue_);
    }
    // Everything queued goes in as few stream writes as the size cap allows.
    while (!queued.empty() && !broken) {
      EnvelopeBatch batch;
      size_t bytes = 0;
      while (!queued.empty() && (batch.envelope_size() == 0 || bytes < kMaxBatchBytes)) {
        bytes += queued.front().ByteSizeLong();
        *batch.add_envelope() = std::move(queued.front());
        queued.pop_front();
      }
      broken = !writer->Write(batch);
    }
    queued.clear();
  }
  if (!broken) writer->WritesDone();
  writer->Finish();
  std::lock_guard<std::mutex> lock(mutex_);
  active_context_ = nullptr;
}

}  // namespace charybdis::node
