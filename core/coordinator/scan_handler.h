#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/request/consistency.h"
#include "core/request/context.h"
#include "core/request/pending_request.h"
#include "core/cluster/token_ring.h"

namespace charybdis {

// One scan (ScanOp) on its coordinator. It walks the range in ring order,
// one vnode range per round, since each has its own replicas. A round asks
// every shard of `blocked_for` live replicas that count for the level for
// its rows from the current position, merges the answers by last-write-
// wins, and keeps the merge only up to the first row some source may not
// have sent in full (a source that reached the end of the round's range
// covers all of it). Live rows go to the answer up to the limit; the next
// round starts after the last row kept. No digests and no read repair
// (docs/cql.md, "Scans").
class ScanHandler final : public PendingRequest, public std::enable_shared_from_this<ScanHandler> {
 public:
  using Reply = std::function<void(ClientResponse)>;
  // Live replicas that count for the level, in the order to ask them.
  using TargetsOf = std::function<std::vector<NodeId>(const std::vector<NodeId>& replicas)>;
  // A replica refused the scan as routed by a topology older than its
  // `fence`: the coordinator runs the whole scan again, from its start, on
  // a topology at least that new (a read: twice changes nothing). The
  // client's answer is the rerun's; this handler answers nothing.
  using Rerun = std::function<void(uint64_t fence)>;

  // `ring`: of the placement at `topology_version`, which the replicas
  // fence against.
  ScanHandler(CoordinatorContext& context, std::shared_ptr<const TokenRing> ring, uint64_t topology_version,
              Requirement requirement, ScanOp scan, TargetsOf targets_of, Reply reply, Rerun rerun,
              std::function<void(const std::vector<uint64_t>& ids)> done);

  void Start();
  void OnWriteAck(NodeId, bool) override {}
  void OnReadResponse(NodeId, const ReplicaReadResponse&) override {}
  void OnScanResponse(const Address& from, const ReplicaScanResponse& response) override;

 private:
  // A row's place in ring order.
  using RowPosition = std::tuple<Token, std::string, std::string>;  // token, partition key, clustering key

  void NextRound();
  // Adds the round's merged rows up to `covered` (all when null).
  void TakeRows(const std::optional<RowPosition>& covered);
  void Collected();
  // A replica holds an accepted proposal newer than its commit in the
  // round's range: the round's rows may lack a value Paxos chose (and the
  // client was told of). Its rounds are finished, then the round runs
  // again, once per round (docs/lwt.md).
  void FinishPaxosThenRerunRound(std::set<std::string> partition_keys);
  void FinishPaxos(const std::string& partition_key);
  void Finish(ClientResponse response);
  // Ends without an answer: the rerun gives it.
  void FinishFenced(uint64_t fence);
  void OnTimeout();

  CoordinatorContext& context_;
  const std::shared_ptr<const TokenRing> ring_;
  const uint64_t topology_version_;
  const Requirement requirement_;
  const ScanOp scan_;
  TargetsOf targets_of_;
  Reply reply_;
  Rerun rerun_;
  std::function<void(const std::vector<uint64_t>&)> done_;

  // Where the next round starts: scan_'s start, then after each round.
  ScanOp position_;
  Token round_end_ = 0;
  uint64_t id_ = 0;
  std::vector<uint64_t> ids_;
  std::set<Address> asked_;
  std::map<Address, ReplicaScanResponse> answers_;
  ClientResponse result_;
  uint32_t taken_ = 0;  // live rows taken for the answer (counted only, for count_only)
  TimerId timeout_timer_ = 0;
  bool finished_ = false;
  // The current round ran again after finishing Paxos rounds: its answers
  // stand as they are.
  bool round_finished_paxos_ = false;
  std::set<std::string> finishing_;  // partitions whose rounds are being finished
};

}  // namespace charybdis
