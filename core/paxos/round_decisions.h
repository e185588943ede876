#pragma once

// The decisions of a proposer's round, as pure functions of the promises
// and replies it received: what the quorum knows, whether conditions hold,
// what a batch of conditional writes answers and writes, and what became
// of a value a minority accepted. core/paxos/proposer.cc acts on them;
// tests/proposer_test.cc tells their stories.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/data/partition.h"
#include "core/env/address.h"
#include "core/paxos/row_spans.h"
#include "core/request/result_rows.h"
#include "proto/client.pb.h"
#include "proto/messages.pb.h"

namespace charybdis {

// The newest commit and the newest accepted proposal among a quorum's
// promises (null when none has one).
struct QuorumKnowledge {
  const Proposal* latest_commit = nullptr;
  const Proposal* in_progress = nullptr;
};
QuorumKnowledge Survey(const std::map<NodeId, PaxosPromise>& promises);

// The partition as the quorum's promises read it, with the latest commit
// applied on top.
Partition CurrentPartition(const std::map<NodeId, PaxosPromise>& promises, const Proposal* latest_commit);

// Whether `row` (null if absent) satisfies a statement's conditions at
// `now`, the row existing as `columns` see it. An absent column equals
// nothing and differs from everything.
bool Holds(const CasStatement& statement, const Row* row, Timestamp now, const ReadColumns& columns);

// A batch of conditional writes evaluated in arrival order, each on what
// the ones before it left.
struct BatchEvaluation {
  std::vector<ClientResponse> answers;  // one per operation
  Partition mutation;                   // what the applied ones write
  bool any_applied = false;
};
// The mutation is stamped with the ballot's time; list elements it adds
// are named by the ballot (ListElementPath).
BatchEvaluation EvaluateBatch(const std::vector<CasOp>& batch, const Partition& current, const Ballot& ballot,
                              Timestamp now, ConsistencyLevel serial_level);

// A serial read's answer: the rows of `read` in `current`.
ClientResponse SerialReadAnswer(const ReadOp& read, const Partition& current, Timestamp now,
                                ConsistencyLevel serial_level);

// What the rows a round's prepare asks replicas to read, one span per
// operation, sorted and disjoint; empty: the whole partition.
std::vector<RowSpan> RowsToRead(const std::vector<CasOp>& batch, const ReadOp* serial_read);

// What a new round's quorum says of our own value, which a minority
// accepted under ballot `origin` in an earlier round (docs/lwt.md).
enum class Fate {
  kCommitted,       // someone finished it: applied, as evaluated
  kUnknown,         // a member forgot or did not understand: uncertain
  kProposeAgain,    // not chosen, nothing decided since: ours may go again
  kDecidedAbove,    // another value was decided above it: evaluate afresh
  kUncertain,       // not chosen here, but a commit we did not see may hide it
};
// `evaluated_on`: the latest commit our value was evaluated on.
Fate FateOfUncertainValue(const std::map<NodeId, PaxosPromise>& promises, const Ballot& origin,
                          const Proposal* latest_commit, const std::optional<Ballot>& evaluated_on);

// The proposal of `mutation` under `ballot`: every cell takes the ballot's
// time and row tombstones one microsecond less, so a value finished under
// our ballot wins last-write-wins over what came before it, and a row
// deleted and written again in one batch keeps its new cells.
Proposal Restamped(const PartitionData& mutation, const std::string& table, const std::string& partition_key,
                   const Ballot& ballot, const Ballot& origin);

}  // namespace charybdis
