#pragma once

#include "core/env/address.h"
#include "proto/messages.pb.h"

namespace charybdis {

// A request in flight on its coordinator, to which replica answers with its
// id are routed.
class PendingRequest {
 public:
  virtual ~PendingRequest() = default;
  virtual void OnWriteAck(NodeId replica, bool ok) = 0;
  // A replica refused a write routed by a topology older than its fence
  // (core/replica/replica.h). A plain write answers at once (WriteHandler);
  // a batch's or a read repair's waits out its timeout.
  virtual void OnWriteFenced(NodeId replica, uint64_t /*fence*/) { OnWriteAck(replica, false); }
  virtual void OnReadResponse(NodeId replica, const ReplicaReadResponse& response) = 0;
  // Scan answers go to scan handlers only: `from` is the replica's shard.
  virtual void OnScanResponse(const Address&, const ReplicaScanResponse&) {}
  // Paxos answers go to proposers only.
  virtual void OnPromise(NodeId, const PaxosPromise&) {}
  virtual void OnAcceptReply(NodeId, const PaxosAcceptReply&) {}
  virtual void OnCommitAck(NodeId, const PaxosCommitAck&) {}
};

}  // namespace charybdis
