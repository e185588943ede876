#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/request/consistency.h"
#include "core/request/context.h"
#include "core/request/pending_request.h"
#include "core/data/partition.h"

namespace charybdis {

// One read on its coordinator: full data from the first target, digests
// from the rest of the first blocked_for targets. When the answers agree,
// the data is the result. When they differ, it reads full data from every
// replica that answered, reconciles by last-write-wins, writes what each
// stale replica lacks back to it and waits for those writes before
// answering (blocking read-repair: a value a quorum read returned is on a
// quorum, so later quorum reads never go back in time). A read with a
// limit (ReadOp.limit) stops on each replica after its limit of stored
// rows: the answers then agree only up to the first stop among them, so
// the result ends there, and says so (Cassandra's short-read protection,
// done by ending the page early instead of asking again). If answers are slow
// it speculatively asks one more replica; answers after the reply that
// differ from it are repaired in the background.
class ReadExecutor final : public PendingRequest,
                           public std::enable_shared_from_this<ReadExecutor> {
 public:
  using Reply = std::function<void(ClientResponse)>;

  // `targets`: live replicas that count towards the level, in the order to
  // ask them; the first blocked_for are asked at once, the rest are spares
  // for speculative retry.
  // `topology_version`: what the targets were chosen by (replicas refuse a
  // version older than their fence).
  ReadExecutor(CoordinatorContext& context, uint64_t id, Requirement requirement, Token token,
               ReadOp read, std::vector<NodeId> targets, uint64_t topology_version, Reply reply,
               std::function<void(const std::vector<uint64_t>& ids)> done);

  void Start();
  void OnWriteAck(NodeId replica, bool ok) override;
  void OnReadResponse(NodeId replica, const ReplicaReadResponse& response) override;

 private:
  struct Answer {
    bool has_data = false;
    Partition data;
    uint64_t digest = 0;
    bool paxos_in_progress = false;
    // A read with a limit that stopped: the last row it covers (data answers).
    std::optional<std::string> read_through;
  };
  enum class Phase { kCollecting, kFinishingPaxos, kRepairReading, kRepairWriting, kReplied };

  void Ask(NodeId replica, bool digest_only);
  // An answer flagged an unfinished Paxos round: finish it, then read anew.
  void FinishPaxosThenRestart();
  // One attempt to finish the round; on success the read starts again.
  void TryFinishingPaxos();
  // Once the round is finished: the read's second pass.
  void ReadAgain();
  void SendFirstRequests();
  // Asks one replica more than needed if the answers are slow to come.
  void ArmSpeculation();
  void Collected();
  void StartRepair();
  void RepairWrites();
  void ReplyWith(const Partition& result);
  void Speculate();
  // A replica that cannot answer (its disk failed, or it found corrupt
  // bytes and dropped them) is as good as down for this read: ask the next
  // replica now rather than wait for speculation or the timeout.
  void ReplaceRefused(NodeId replica);
  // Too many refused for the level: the client hears READ_FAILURE now.
  void FailRefused();
  void OnTimeout();
  // Ends the read with a failure answer (counts and level filled in) for
  // the caller to complete and send.
  ClientResponse FailureResponse(ClientResponse::Code code, const char* message);
  void RepairInBackground(NodeId replica, const Answer& answer);
  void SendRepair(NodeId replica, const Partition& missing);
  void ReplaceFailedRepair(NodeId replica);
  void MaybeDone();
  uint32_t Counted() const;

  CoordinatorContext& context_;
  uint64_t id_;                // of the current pass
  std::vector<uint64_t> ids_;  // of every pass, to forget when done
  const Requirement requirement_;
  const Token token_;
  const ReadOp read_;
  const uint64_t topology_version_;
  std::vector<NodeId> targets_;  // reordered only by ReadAgain
  Reply reply_;
  std::function<void(const std::vector<uint64_t>&)> done_;

  Nanos started_ = 0;
  Phase phase_ = Phase::kCollecting;
  size_t next_target_ = 0;
  std::set<NodeId> asked_;
  std::set<NodeId> refused_;  // answered that they cannot read
  std::map<NodeId, Answer> answers_;
  std::set<NodeId> repairing_;  // repair writes awaiting an ack
  Partition result_;
  std::optional<std::string> result_through_;  // where result_ stops, if it was cut
  uint64_t result_digest_ = 0;
  bool timed_out_ = false;
  bool paxos_finished_ = false;
  TimerId timeout_timer_ = 0;
  TimerId speculation_timer_ = 0;
};

}  // namespace charybdis
