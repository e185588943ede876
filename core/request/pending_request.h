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
  virtual void OnReadResponse(NodeId replica, const ReplicaReadResponse& response) = 0;
  // Scan answers go to scan handlers only: `from` is the replica's shard.
  virtual void OnScanResponse(const Address&, const ReplicaScanResponse&) {}
  // Paxos answers go to proposers only.
  virtual void OnPromise(NodeId, const PaxosPromise&) {}
  virtual void OnAcceptReply(NodeId, const PaxosAcceptReply&) {}
  virtual void OnCommitAck(NodeId, const PaxosCommitAck&) {}
};

}  // namespace charybdis
