#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/request/context.h"
#include "core/data/cell.h"
#include "core/request/pending_request.h"

namespace charybdis {

// One BATCH on its coordinator, its writes already grouped into one
// mutation per partition (each applied atomically by its replicas). A
// logged batch over several partitions is first stored in the batch log
// of `log_nodes` (core/batchlog/batchlog.h); once every node acknowledged, the
// mutations are written at the batch's level, and once every one met it,
// the batch log entries are removed. A coordinator that fails in between
// leaves the entries, and their nodes replay the batch: all of it is
// applied, or none of it was acknowledged (Cassandra's batchlog).
class BatchHandler final : public PendingRequest, public std::enable_shared_from_this<BatchHandler> {
 public:
  using Reply = std::function<void(ClientResponse)>;
  using RunMutation = std::function<void(PartitionData, Timestamp, ConsistencyLevel, Reply)>;

  // `log_nodes`: empty for an unlogged batch or one of one partition.
  BatchHandler(CoordinatorContext& context, std::vector<PartitionData> mutations, Timestamp timestamp,
               ConsistencyLevel level, std::vector<NodeId> log_nodes, RunMutation run_mutation, Reply reply,
               std::function<void(const std::vector<uint64_t>& ids)> done);

  void Start();
  // A batch log node stored the batch (or could not).
  void OnWriteAck(NodeId node, bool ok) override;
  void OnReadResponse(NodeId, const ReplicaReadResponse&) override {}

 private:
  void WriteMutations();
  void OnMutationWritten(ClientResponse response);
  void OnLogTimeout();
  void Finish(ClientResponse response);

  CoordinatorContext& context_;
  std::vector<PartitionData> mutations_;
  const Timestamp timestamp_;
  const ConsistencyLevel level_;
  const std::vector<NodeId> log_nodes_;
  RunMutation run_mutation_;
  Reply reply_;
  std::function<void(const std::vector<uint64_t>&)> done_;

  uint64_t id_ = 0;  // of the batch log stores
  std::string batch_id_;
  std::set<NodeId> logged_;
  bool writing_ = false;
  size_t unwritten_ = 0;
  std::optional<ClientResponse> failure_;  // the first mutation that failed
  bool finished_ = false;
  TimerId log_timer_ = 0;
};

}  // namespace charybdis
