#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/request/consistency.h"
#include "core/request/context.h"
#include "core/request/pending_request.h"
#include "core/data/cell.h"

namespace charybdis {

// One write on its coordinator (ScyllaDB's write response handler): sends
// the mutation to every live replica, hints the down ones, answers the
// client once the consistency level is met (or with a timeout saying how
// many acknowledged), and hints every replica that has not acknowledged by
// the write timeout.
class WriteHandler final : public PendingRequest,
                           public std::enable_shared_from_this<WriteHandler> {
 public:
  using Reply = std::function<void(ClientResponse)>;
  // Runs the write again, with the same mutation and timestamp, once the
  // coordinator holds topology `fence`; `reply` answers its client.
  using Rerun = std::function<void(uint64_t fence, PartitionData mutation, Timestamp timestamp,
                                   ConsistencyLevel level, Reply reply)>;

  // `topology_version`: what the replicas were chosen by (they refuse a
  // version older than their fence); `replay`: a batch log's replay.
  WriteHandler(CoordinatorContext& context, uint64_t id, Requirement requirement, Token token,
               std::vector<NodeId> replicas, uint64_t topology_version, bool replay, PartitionData mutation,
               Timestamp timestamp, Reply reply, std::function<void()> done, Rerun rerun);

  void Start();
  void OnWriteAck(NodeId replica, bool ok) override;
  // The replicas it was routed to are no longer enough: the write runs
  // again on the topology of the replica's fence (the client's answer is
  // that run's), as Cassandra's coordinator retries on the new topology.
  void OnWriteFenced(NodeId replica, uint64_t fence) override;
  void OnReadResponse(NodeId, const ReplicaReadResponse&) override {}

 private:
  void Hint(NodeId replica);
  void OnHintStored(bool stored);
  void MaybeReply();
  void OnTimeout();
  // Answers WRITE_TIMEOUT: the write may or may not have been applied.
  void ReplyTimedOut(const std::string& why);
  void MaybeDone();

  CoordinatorContext& context_;
  const uint64_t id_;
  const Requirement requirement_;
  const Token token_;
  const std::vector<NodeId> replicas_;
  const PartitionData mutation_;
  const Timestamp timestamp_;
  const uint64_t topology_version_;
  const bool replay_;
  Reply reply_;
  std::function<void()> done_;
  Rerun rerun_;

  Nanos started_ = 0;
  std::vector<NodeId> pending_;  // sent, not yet acknowledged
  std::vector<NodeId> acked_;
  uint32_t hints_stored_ = 0;    // count towards ANY only
  uint32_t hints_in_flight_ = 0;
  bool replied_ = false;
  bool timed_out_ = false;
  TimerId timer_ = 0;
};

}  // namespace charybdis
