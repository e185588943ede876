#include "core/paxos/round_decisions.h"

#include <algorithm>
#include <set>

#include "core/env/assert.h"
#include "core/paxos/ballot.h"
#include "core/request/result_rows.h"

namespace charybdis {

namespace {

// Byte-wise (unsigned) comparison: <0, 0, >0.
int CompareBytes(const std::string& a, const std::string& b) {
  const size_t common = std::min(a.size(), b.size());
  for (size_t i = 0; i < common; i++) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

bool Compares(Condition::Op op, int order) {
  switch (op) {
    case Condition::EQ: return order == 0;
    case Condition::NE: return order != 0;
    case Condition::LT: return order < 0;
    case Condition::LE: return order <= 0;
    case Condition::GT: return order > 0;
    default: return order >= 0;
  }
}

// Removes a cell, and a collection's elements with its own cell.
void EraseColumn(Row& row, const std::string& column) {
  row.cells.erase(column);
  if (IsElementCell(column)) return;
  std::erase_if(row.cells, [&](const auto& cell) { return IsElementCell(cell.first) && ColumnOfCell(cell.first) == column; });
}

// Applies one conditional write's statements, in order, to `working` (what a
// client would now read) and to `mutation` (what the round will write): a
// later statement overrides an earlier one on the same cell or row.
void ApplyStatements(const CasOp& op, const Ballot& ballot, Timestamp now, uint64_t& list_elements, Partition& working,
                     Partition& mutation) {
  const Timestamp micros = ballot.micros();
  for (const CasStatement& statement : op.statement()) {
    const WriteOp& write = statement.write();
    const std::string& key = write.clustering_key();
    if (write.delete_row()) {
      working.rows.erase(key);
      mutation.rows[key] = Row{micros - 1, {}};
    }
    // A collection's tombstone: the one set whole one microsecond before
    // its new elements, as a plain write does (Coordinator::MutationOf).
    // Elements an earlier operation of the round added go from the
    // mutation too: the round's writes all carry its one timestamp.
    for (const std::string& column : write.clear_collection()) {
      EraseColumn(working.rows[key], column);
      EraseColumn(mutation.rows[key], column);
      mutation.rows[key].cells[column] = Cell{micros - 1, true, "", 0, 0};
    }
    for (const ColumnValue& put : write.put()) {
      Cell cell = LiveCell(put.value(), micros, write.ttl_seconds(), now);
      // The ballot is this round's alone: its list elements are too.
      const std::string name =
          put.place() == ColumnValue::NAMED
              ? put.column()
              : ElementCellName(put.column(), ListElementPath(put.place() == ColumnValue::APPEND ? micros : -micros,
                                                              ballot.unique(), ++list_elements));
      working.rows[key].cells[name] = cell;
      mutation.rows[key].cells[name] = std::move(cell);
    }
    // As a row's deletion, one microsecond before the round's puts: a
    // collection deleted, then added to by a later operation of the round,
    // keeps that addition (Restamped keeps a tombstone alone at the
    // ballot's time).
    for (const std::string& column : write.delete_column()) {
      EraseColumn(working.rows[key], column);
      EraseColumn(mutation.rows[key], column);
      mutation.rows[key].cells[column] = Cell{micros - 1, true, "", 0, 0};
    }
    // What the partition already holds may shadow what the round added: a
    // newer collection tombstone (a plain write stamped ahead of the
    // ballot's clock). The next operation's conditions see what a reader would.
    if (auto row = working.rows.find(key); row != working.rows.end()) row->second.DropShadowedElements();
  }
}

}  // namespace

QuorumKnowledge Survey(const std::map<NodeId, PaxosPromise>& promises) {
  QuorumKnowledge known;
  for (const auto& [replica, promise] : promises) {
    CHARYBDIS_ASSERT(promise.ok());
    CHARYBDIS_ASSERT(promise.promised());
    if (promise.has_committed() &&
        (known.latest_commit == nullptr || BallotLess(known.latest_commit->ballot(), promise.committed().ballot()))) {
      known.latest_commit = &promise.committed();
    }
    if (promise.has_accepted() &&
        (known.in_progress == nullptr || BallotLess(known.in_progress->ballot(), promise.accepted().ballot()))) {
      known.in_progress = &promise.accepted();
    }
  }
  return known;
}

Partition CurrentPartition(const std::map<NodeId, PaxosPromise>& promises, const Proposal* latest_commit) {
  CHARYBDIS_ASSERT(!promises.empty());
  Partition current;
  for (const auto& [replica, promise] : promises) current.Merge(Partition::FromProto(promise.data()));
  if (latest_commit != nullptr) current.Merge(Partition::FromProto(latest_commit->mutation()));
  current.Compact();
  return current;
}

// A collection's live elements at `now`, as a condition compares them.
// REQUIRES: a compacted row (CurrentPartition, and ApplyStatements keeps
// it so): no element its collection's tombstone shadows.
std::string ElementsOf(const Row& row, const std::string& column, bool with_paths, Timestamp now) {
  std::vector<std::pair<std::string, std::string>> elements;
  for (auto it = row.cells.upper_bound(column); it != row.cells.end() && IsElementCell(it->first) &&
                                                 ColumnOfCell(it->first) == column;
       ++it) {
    const Cell* tombstone = row.CollectionTombstoneOf(it->first);
    CHARYBDIS_ASSERT(tombstone == nullptr || it->second.timestamp > tombstone->timestamp);
    if (it->second.LiveAt(now)) elements.emplace_back(PathOfCell(it->first), it->second.value);
  }
  return ElementsForm(elements, with_paths);
}

bool Holds(const CasStatement& statement, const Row* row, Timestamp now, const ReadColumns& columns) {
  const bool exists = row != nullptr && columns.Exists(*row, now);
  if (statement.if_not_exists()) return !exists;
  if (statement.if_exists() && !exists) return false;
  for (const Condition& condition : statement.condition()) {
    if (condition.compared() != Condition::CELL) {
      CHARYBDIS_ASSERT(condition.op() == Condition::EQ || condition.op() == Condition::NE);  // checked when asked
      const std::string elements =
          row == nullptr ? "" : ElementsOf(*row, condition.column(), condition.compared() == Condition::ELEMENTS, now);
      if ((elements == condition.value()) != (condition.op() == Condition::EQ)) return false;
      continue;
    }
    const Cell* cell = nullptr;
    if (row != nullptr) {
      auto it = row->cells.find(condition.column());
      if (it != row->cells.end() && it->second.LiveAt(now)) cell = &it->second;
      // The row is compacted: no element its collection's tombstone shadows.
      CHARYBDIS_ASSERT(cell == nullptr || !IsElementCell(condition.column()) ||
                       row->CollectionTombstoneOf(condition.column()) == nullptr ||
                       cell->timestamp > row->CollectionTombstoneOf(condition.column())->timestamp);
    }
    if (cell == nullptr) {
      if (condition.op() != Condition::NE) return false;
      continue;
    }
    if (!Compares(condition.op(), CompareBytes(cell->value, condition.value()))) return false;
  }
  return true;
}

BatchEvaluation EvaluateBatch(const std::vector<CasOp>& batch, const Partition& current, const Ballot& ballot,
                              Timestamp now, ConsistencyLevel serial_level) {
  const Timestamp ballot_micros = ballot.micros();
  uint64_t list_elements = 0;
  CHARYBDIS_ASSERT(!batch.empty());
  CHARYBDIS_ASSERT(ballot_micros > 0);
  BatchEvaluation evaluation;
  Partition working = current;
  for (const CasOp& op : batch) {
    CHARYBDIS_ASSERT(op.statement_size() > 0);
    std::set<std::string> rows;
    const ReadColumns columns(op.column());
    bool holds = true;
    for (const CasStatement& statement : op.statement()) {
      const std::string& key = statement.write().clustering_key();
      rows.insert(key);
      auto it = working.rows.find(key);
      holds = holds && Holds(statement, it == working.rows.end() ? nullptr : &it->second, now, columns);
    }
    ClientResponse response;
    response.set_code(ClientResponse::OK);
    response.set_consistency(serial_level);
    response.set_applied(holds);
    if (holds) {
      evaluation.any_applied = true;
      response.set_write_timestamp(ballot_micros);
      ApplyStatements(op, ballot, now, list_elements, working, evaluation.mutation);
    } else {
      AddVisibleRows(working, now, &rows, columns, response);
    }
    evaluation.answers.push_back(std::move(response));
  }
  CHARYBDIS_ASSERT(evaluation.answers.size() == batch.size());
  CHARYBDIS_ASSERT(evaluation.any_applied || evaluation.mutation.rows.empty());
  return evaluation;
}

ClientResponse SerialReadAnswer(const ReadOp& read, const Partition& current, Timestamp now,
                                ConsistencyLevel serial_level) {
  ClientResponse response;
  response.set_code(ClientResponse::OK);
  response.set_consistency(serial_level);
  std::set<std::string> rows;  // the row read, or those of the range [start, end)
  for (const auto& [key, row] : current.rows) {
    const bool wanted = read.range() ? key >= read.start() && (read.end().empty() || key < read.end())
                                     : key == read.clustering_key();
    if (wanted) rows.insert(key);
  }
  CHARYBDIS_ASSERT(read.range() || rows.size() <= 1);
  AddVisibleRows(current, now, &rows, ReadColumns(read.column()), response);
  return response;
}

std::vector<RowSpan> RowsToRead(const std::vector<CasOp>& batch, const ReadOp* serial_read) {
  // Conditions look at the rows their statements write, and a serial read
  // at its row, so replicas need not send the rest of the partition (a
  // partition of many rows would otherwise travel whole every round). One
  // span per operation, not one for the round: the operations of a shared
  // round write far apart, and one span from the first row to the last
  // would read everything between them.
  CHARYBDIS_ASSERT((serial_read != nullptr) == batch.empty());
  if (serial_read != nullptr && serial_read->range()) return {};
  std::vector<RowSpan> spans;
  auto span_of = [&spans](const std::string& first, const std::string& last) {
    RowSpan& span = spans.emplace_back();
    span.set_first(first);
    span.set_last(last);
  };
  if (serial_read != nullptr) span_of(serial_read->clustering_key(), serial_read->clustering_key());
  for (const CasOp& op : batch) {
    CHARYBDIS_ASSERT(op.statement_size() > 0);
    std::string first = op.statement(0).write().clustering_key();
    std::string last = first;
    for (const CasStatement& statement : op.statement()) {
      first = std::min(first, statement.write().clustering_key());
      last = std::max(last, statement.write().clustering_key());
    }
    span_of(first, last);
  }
  CHARYBDIS_ASSERT(!spans.empty());
  return SortedDisjoint(std::move(spans));
}

Fate FateOfUncertainValue(const std::map<NodeId, PaxosPromise>& promises, const Ballot& origin,
                          const Proposal* latest_commit, const std::optional<Ballot>& evaluated_on) {
  CHARYBDIS_ASSERT(!promises.empty());
  bool committed = false;
  bool all_say_not_committed = true;
  for (const auto& [replica, promise] : promises) {
    const bool holds_it = promise.has_committed() && promise.committed().has_origin() &&
                          BallotEqual(promise.committed().origin(), origin);
    committed = committed || holds_it || promise.origin_fate() == PaxosPromise::ORIGIN_COMMITTED;
    all_say_not_committed =
        all_say_not_committed && promise.origin_fate() == PaxosPromise::ORIGIN_NOT_COMMITTED;
  }
  if (committed) return Fate::kCommitted;
  // Anything but an explicit "not committed" from every member (a replica
  // that forgot, or one that did not understand the question) leaves the
  // fate unknown.
  if (!all_say_not_committed) return Fate::kUnknown;
  // Not chosen: a chosen value is committed on a quorum (ours would say so)
  // or still accepted on one (the round would have finished it) before any
  // other value can be chosen.
  const bool nothing_decided_since =
      latest_commit == nullptr ? !evaluated_on
                               : evaluated_on && BallotEqual(*evaluated_on, latest_commit->ballot());
  // Nothing is in progress in this quorum, so Paxos lets us propose any
  // value; proposing ours again keeps it the only one of ours in play, and
  // its evaluation still holds.
  if (nothing_decided_since) return Fate::kProposeAgain;
  // Another value was decided above ours: every quorum now sees that
  // commit, or its accepts, above our value, so ours can never be chosen.
  if (latest_commit != nullptr && BallotLess(origin, latest_commit->ballot())) return Fate::kDecidedAbove;
  return Fate::kUncertain;
}

Proposal Restamped(const PartitionData& mutation, const std::string& table, const std::string& partition_key,
                   const Ballot& ballot, const Ballot& origin) {
  CHARYBDIS_ASSERT(!BallotLess(ballot, origin));  // an origin is a ballot of ours or older
  Partition restamped = Partition::FromProto(mutation);
  for (auto& [key, row] : restamped.rows) {
    if (row.tombstone) row.tombstone = ballot.micros() - 1;
    for (auto cell = row.cells.begin(); cell != row.cells.end(); ++cell) {
      // A collection set whole: its tombstone stays just below the
      // elements it puts (the next cells: cell.h), as ApplyStatements made it.
      const auto next = std::next(cell);
      const bool below_elements = cell->second.tombstone && next != row.cells.end() && IsElementCell(next->first) &&
                                  ColumnOfCell(next->first) == cell->first && next->second.timestamp > cell->second.timestamp;
      cell->second.timestamp = ballot.micros() - (below_elements ? 1 : 0);
    }
  }
  CHARYBDIS_ASSERT(restamped.rows.size() == static_cast<size_t>(mutation.rows_size()));
  Proposal proposal;
  *proposal.mutable_ballot() = ballot;
  *proposal.mutable_origin() = origin;
  PartitionData* data = proposal.mutable_mutation();
  data->set_table(table);
  data->set_partition_key(partition_key);
  restamped.ToProto(data);
  CHARYBDIS_ASSERT(BallotEqual(proposal.ballot(), ballot));
  return proposal;
}

}  // namespace charybdis
