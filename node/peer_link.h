#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "proto/node.grpc.pb.h"

namespace charybdis::node {

// The outbound half of the internode connection to one peer: a thread that
// keeps one gRPC client stream open and writes queued messages to it. A
// message is fire-and-forget: one written to a stream that then breaks, or
// queued beyond the bound, is lost (core/ copes), and the link reconnects
// with a short back-off.
class PeerLink {
 public:
  explicit PeerLink(std::string address);
  PeerLink(const PeerLink&) = delete;
  PeerLink& operator=(const PeerLink&) = delete;
  ~PeerLink();

  void Start();
  void Stop();
  void Send(Envelope message);

 private:
  void Loop();
  // Writes queued messages until the stream breaks or the link stops.
  void Pump(Internode::Stub& stub);

  static constexpr size_t kMaxQueued = 100000;

  const std::string address_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Envelope> queue_;                    // guarded by mutex_
  bool stopping_ = false;                         // guarded by mutex_
  grpc::ClientContext* active_context_ = nullptr;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace charybdis::node
