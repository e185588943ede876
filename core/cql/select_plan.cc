// SELECT on a table of ours: which partitions and which slice of each to
// read, and how the rows come back (order, LIMIT, COUNT, pages).

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/cql/aggregates.h"
#include "core/cql/clustering_slices.h"
#include "core/cql/plan_parts.h"
#include "core/data/big_endian.h"
#include "core/data/token.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"

namespace charybdis::cql {
namespace {

// Where the previous page stopped: after `last` in entry `partition` (a
// partition, or one IN slice of it: SelectSpec), with `returned` rows
// returned so far (for LIMIT).
struct PagingState {
  int32_t partition = 0;
  int32_t returned = 0;
  std::string last;
};

std::string EncodePaging(const PagingState& state) {
  Writer out;
  out.Int(state.partition);
  out.Int(state.returned);
  out.Bytes(state.last);
  return out.Take();
}

std::optional<PagingState> DecodePaging(std::string_view bytes) {
  Reader in(bytes);
  PagingState state{in.Int(), in.Int(), in.Bytes().bytes.value_or("")};
  if (!in.ok() || !in.AtEnd() || state.partition < 0 || state.returned < 0) return std::nullopt;
  return state;
}

// What a SELECT reads: each partition, and in each the slices, in the
// result's order. Entry i of the read is partition i / slices, slice
// i % slices (the slices taken backwards when reversed).
struct SelectSpec {
  std::vector<std::vector<std::string>> partition_keys;  // native values
  std::vector<Slice> slices;  // in clustering order; several for IN
  bool reversed = false;
  std::optional<int32_t> limit;

  size_t entries() const { return partition_keys.size() * slices.size(); }
  size_t PartitionOf(size_t entry) const { return entry / slices.size(); }
  const Slice& SliceOf(size_t entry) const {
    CHARYBDIS_ASSERT(entry < entries());  // so slices is not empty
    const size_t index = entry % slices.size();
    return slices[reversed ? slices.size() - 1 - index : index];
  }
};

// The partition keys: the product of each key column's = or IN values,
// each value once, in the order first given (Cassandra and ScyllaDB read
// `pk IN (1, 1)` once: CASSANDRA-12420, scylladb#3713).
absl::Status PartitionKeys(const Table& table, const Select& select, const Bindings& bindings, SelectSpec& spec) {
  spec.partition_keys = {{}};
  for (int i = 0; i < table.partition_key_count; i++) {
    const Column& column = table.columns[i];
    std::vector<std::string> values;
    for (const Relation& relation : select.where) {
      if (relation.column != column.name) continue;
      if (absl::Status added = AddRelationValues(relation, column, bindings, values); !added.ok()) return added;
    }
    std::set<std::string> seen;
    std::erase_if(values, [&seen](const std::string& value) { return !seen.insert(value).second; });
    std::vector<std::vector<std::string>> product;
    for (const auto& key : spec.partition_keys) {
      for (const std::string& value : values) {
        product.push_back(key);
        product.back().push_back(value);
      }
    }
    spec.partition_keys = std::move(product);
  }
  return absl::OkStatus();
}

ClientRequest ReadRequest(const Table& table, const std::string& partition_key, const Slice& slice,
                          ConsistencyLevel consistency, uint32_t limit) {
  ClientRequest request;
  ReadOp* read = request.mutable_read();
  read->set_table(table.storage);
  read->set_partition_key(partition_key);
  read->set_consistency(consistency);
  for (std::string& column : table.StorageColumns()) read->add_column(std::move(column));
  if (slice.single) {
    read->set_clustering_key(slice.key);
  } else {
    read->set_range(true);
    read->set_start(slice.start);
    read->set_end(slice.end);
    read->set_limit(limit);
  }
  return request;
}

// The slice of the partition where the previous page stopped: the rows
// after its last one, in the order of the result.
Slice Resume(Slice slice, const std::string& last, bool reversed) {
  if (reversed) {
    if (slice.end.empty() || last < slice.end) slice.end = last;
  } else {
    slice.start = std::max(slice.start, last + std::string(1, '\0'));
  }
  return slice;
}

// The stored rows each read of a page may stop after (ReadOp.limit; 0:
// none): one more than the page holds, so that a full page knows whether
// more follow, and no more than LIMIT leaves. Without paging, the result is
// one answer and must hold every row, so reads are whole, as are COUNT(*)
// (one answer too), serial reads (one Paxos round, read whole) and reads
// in reverse order (storage reads forward: a limit would stop at the
// wrong end; docs/data_path.md).
uint32_t ReadLimit(const SelectSpec& spec, bool aggregating, const QueryOptions& options, const PagingState& from) {
  if (options.page_size <= 0 || aggregating || IsSerial(options.consistency) || spec.reversed) return 0;
  int64_t limit = int64_t{options.page_size} + 1;
  if (spec.limit) limit = std::min<int64_t>(limit, std::max(1, *spec.limit - from.returned));
  CHARYBDIS_ASSERT(limit >= 1);
  return static_cast<uint32_t>(std::min<int64_t>(limit, UINT32_MAX));
}

// Whether the SELECT answers one row that sums up the rows it read:
// COUNT(*), or an aggregate among its columns.
bool Aggregating(const Prepared& prepared) {
  return std::get<Select>(prepared.parsed.statement).count ||
         std::any_of(prepared.result_columns.begin(), prepared.result_columns.end(),
                     [](const ResultColumn& column) { return column.aggregate(); });
}

// The one row of a SELECT with aggregates: each aggregate over the rows'
// values of its column (AssembleRow gives them), each other column as
// the first row holds it, as in Cassandra.
ResultRow AggregateRow(const Table& table, const std::vector<ResultColumn>& columns, const std::vector<ResultRow>& rows) {
  ResultRow row;
  for (size_t i = 0; i < columns.size(); i++) {
    if (!columns[i].aggregate()) {
      row.push_back(rows.empty() ? std::nullopt : rows[0][i]);
      continue;
    }
    if (columns[i].source.empty()) {  // count(*)
      row.push_back(NativeBigint(static_cast<int64_t>(rows.size())));
      continue;
    }
    std::vector<std::optional<std::string>> values;
    for (const ResultRow& each : rows) values.push_back(each[i]);
    const Column* source = table.Find(columns[i].source);
    CHARYBDIS_ASSERT(source != nullptr);  // Prepare checked it
    row.push_back(Aggregate(columns[i].holds, source->type, values));
  }
  CHARYBDIS_ASSERT(row.size() == columns.size());
  return row;
}

struct Collected {
  std::vector<ResultRow> rows;
  std::vector<std::pair<int32_t, std::string>> positions;  // partition, clustering key
};

Response Finish(const Prepared& prepared, const SelectSpec& spec, const PagingState& from, int32_t first,
                int32_t page_size, bool skip_metadata, Probes* probes, const std::vector<ClientResponse>& responses) {
  const Table& table = *prepared.table;
  const Select& select = std::get<Select>(prepared.parsed.statement);
  Collected collected;
  // The first entry whose read stopped at its limit, and the last row it
  // covers: the page ends there, as rows after it may be unread.
  std::optional<std::pair<int32_t, std::string>> stop;
  for (size_t i = 0; i < responses.size() && !stop; i++) {
    const ClientResponse& response = responses[i];
    if (response.code() != ClientResponse::OK) return ErrorResponse(ErrorOf(response, false));
    const int32_t partition = first + static_cast<int32_t>(i);
    CHARYBDIS_ASSERT(static_cast<size_t>(partition) < spec.entries());  // one answer per entry read
    std::vector<const charybdis::ResultRow*> rows;
    for (const charybdis::ResultRow& row : response.rows()) rows.push_back(&row);
    if (spec.reversed) std::reverse(rows.begin(), rows.end());
    for (const charybdis::ResultRow* row : rows) {
      collected.rows.push_back(AssembleRow(table, prepared.result_columns, spec.partition_keys[spec.PartitionOf(partition)], *row));
      collected.positions.emplace_back(partition, row->clustering_key());
    }
    if (response.read_cut()) stop.emplace(partition, response.read_through());
  }
  size_t count = collected.rows.size();
  bool limit_reached = false;
  if (spec.limit) {
    const size_t left = std::max(0, *spec.limit - from.returned);
    limit_reached = count >= left;
    count = std::min(count, left);
  }
  ResultSet result;
  result.columns = prepared.result_columns;
  if (select.count) {
    result.rows.push_back({NativeBigint(static_cast<int64_t>(count))});
    return RowsResult(result, skip_metadata);
  }
  if (Aggregating(prepared)) {
    collected.rows.resize(count);
    result.rows.push_back(AggregateRow(table, prepared.result_columns, collected.rows));
    return RowsResult(result, skip_metadata);
  }
  const bool paged = page_size > 0 && count > static_cast<size_t>(page_size);
  if (paged) count = page_size;
  collected.rows.resize(count);
  result.rows = std::move(collected.rows);
  if (paged) {
    CHARYBDIS_ASSERT(count >= 1);
    CHARYBDIS_ASSERT(count < collected.positions.size());  // more rows than the page holds
    const auto& [partition, last] = collected.positions[count - 1];
    // The next page starts on an entry of its own: an empty rest of this
    // one is read, or, after a single row, skipped.
    if (collected.positions[count].first != partition) CHARYBDIS_PROBE(probes, "cql.page_ends_at_slice_end");
    result.paging_state = EncodePaging({partition, from.returned + static_cast<int32_t>(count), last});
  } else if (stop && !limit_reached) {
    // Perhaps short (deleted rows read count toward the limit too), never
    // empty (the coordinator reads on past a round of dead rows); the next
    // page starts after the last row read, live or not.
    CHARYBDIS_PROBE(probes, "cql.page_ends_where_a_read_stopped");
    result.paging_state = EncodePaging({stop->first, from.returned + static_cast<int32_t>(count), stop->second});
  }
  return RowsResult(result, skip_metadata);
}

}  // namespace

Plan PlanSelect(const std::shared_ptr<const Prepared>& prepared, const Bindings& bindings, const QueryOptions& options) {
  const Table& table = *prepared->table;
  const Select& select = std::get<Select>(prepared->parsed.statement);
  for (const Column& column : table.columns) {
    if (column.storage == column.name) continue;
    CHARYBDIS_PROBE(options.probes, "cql.read_of_column_added_again");
    break;
  }
  if (IsScan(table, select)) return PlanScan(prepared, bindings, options);
  SelectSpec spec;
  if (absl::Status keys = PartitionKeys(table, select, bindings, spec); !keys.ok()) return InvalidPlan(std::string(keys.message()));
  if (absl::Status slices = ClusteringSlices(table, select.where, bindings, spec.slices); !slices.ok()) return InvalidPlan(std::string(slices.message()));
  if (select.order_by) {
    const Column& leading = table.columns[table.partition_key_count];
    spec.reversed = select.order_by->second != leading.descending;
  }
  absl::StatusOr<std::optional<int32_t>> limit = LimitOf(select, bindings);
  if (!limit.ok()) return InvalidPlan(std::string(limit.status().message()));
  spec.limit = *limit;
  // A serial read is one Paxos round of one partition and one slice: IN
  // would read each slice in a round of its own, at different moments,
  // and their rows together need not be any state the partition had.
  if (IsSerial(options.consistency) && spec.entries() > 1) {
    return InvalidPlan("SERIAL and LOCAL_SERIAL reads take one partition and no IN on clustering columns");
  }
  // An aggregate is one answer of every row: it reads whole, unpaged.
  const bool aggregating = Aggregating(*prepared);
  PagingState from;
  if (options.paging_state && !aggregating) {
    std::optional<PagingState> state = DecodePaging(*options.paging_state);
    if (!state || state->partition >= static_cast<int32_t>(spec.entries())) {
      return ErrorPlan({ErrorCode::kProtocol, "Invalid value for the paging state", ""});
    }
    from = *state;
  }
  // The partition of the paging state is read again from its last row,
  // unless its one row was that row.
  const bool resuming = options.paging_state.has_value() && !aggregating;
  const bool resumed_single = resuming && spec.entries() > 0 && spec.SliceOf(from.partition).single;
  if (resumed_single) CHARYBDIS_PROBE(options.probes, "cql.page_resumes_after_single_row");
  const int32_t first = from.partition + (resumed_single ? 1 : 0);
  CHARYBDIS_ASSERT(first >= 0);
  const uint32_t read_limit = ReadLimit(spec, aggregating, options, from);
  Plan plan;
  for (size_t i = first; i < spec.entries(); i++) {
    const bool resumed = resuming && static_cast<int32_t>(i) == from.partition;
    const Slice slice = resumed ? Resume(spec.SliceOf(i), from.last, spec.reversed) : spec.SliceOf(i);
    const std::string partition_key = EncodePartitionKey(table, spec.partition_keys[spec.PartitionOf(i)]);
    plan.requests.push_back(ReadRequest(table, partition_key, slice, options.consistency, read_limit));
  }
  // The statement is shared, not copied: the answer may outlive the call.
  plan.finish = [prepared, spec, from, first, page_size = options.page_size, skip_metadata = options.skip_metadata,
                 probes = options.probes](const std::vector<ClientResponse>& responses) {
    return Finish(*prepared, spec, from, first, page_size, skip_metadata, probes, responses);
  };
  return plan;
}

absl::StatusOr<std::optional<int32_t>> LimitOf(const Select& select, const Bindings& bindings) {
  if (!select.limit || bindings.IsUnset(*select.limit)) return std::nullopt;
  absl::StatusOr<std::string> bound = bindings.Required(*select.limit, Type{Kind::kInt, {}}, "LIMIT");
  if (!bound.ok()) return bound.status();
  const int32_t limit = static_cast<int32_t>(ReadBigEndian(*bound, 4));
  if (limit <= 0) return absl::InvalidArgumentError("LIMIT must be strictly positive");
  return limit;
}

namespace {

// WRITETIME(c) or TTL(c) of a stored row: null for a cell it does not
// hold, and TTL null for one that does not expire, as in Cassandra.
std::optional<std::string> WhenOf(const Table& table, const ResultColumn& result, const charybdis::ResultRow& stored) {
  const Column* column = table.Find(result.source);
  CHARYBDIS_ASSERT(column != nullptr && column->kind == Column::Kind::kRegular);  // Prepare checked it
  for (const ResultCell& cell : stored.cells()) {
    if (cell.column() != column->storage) continue;
    if (result.holds == ResultColumn::Holds::kWritetime) return NativeBigint(cell.timestamp());
    if (cell.ttl_left_seconds() == 0) return std::nullopt;
    return NativeInt(static_cast<int32_t>(cell.ttl_left_seconds()));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CollectionOf(const Column& column, const charybdis::ResultRow& stored) {
  // The live elements, in their cells' order: a set's and a map's by
  // element or key, a list's by position (core/data/cell.h).
  std::vector<std::string> elements;
  std::vector<std::pair<std::string, std::string>> entries;
  const Type& type = column.type;
  for (const ResultCell& cell : stored.cells()) {
    if (!IsElementCell(cell.column()) || ColumnOfCell(cell.column()) != column.storage) continue;
    if (type.kind == Kind::kMap) {
      entries.emplace_back(FromComparable(type.params[0], PathOfCell(cell.column())), FromComparable(type.params[1], cell.value()));
    } else {
      elements.push_back(type.kind == Kind::kSet ? FromComparable(type.params[0], PathOfCell(cell.column()))
                                                 : FromComparable(type.params[0], cell.value()));
    }
  }
  // An empty collection is null, as in Cassandra.
  if (elements.empty() && entries.empty()) return std::nullopt;
  return type.kind == Kind::kMap ? NativeMap(entries) : NativeCollection(elements);
}

ResultRow AssembleRow(const Table& table, const std::vector<ResultColumn>& columns,
                      const std::vector<std::string>& partition_key, const charybdis::ResultRow& stored) {
  const std::vector<std::string> clustering = DecodeClustering(table, stored.clustering_key());
  ResultRow row;
  for (const ResultColumn& result : columns) {
    if (result.holds == ResultColumn::Holds::kToken) {
      row.push_back(NativeBigint(TokenOf(EncodePartitionKey(table, partition_key))));
      continue;
    }
    if (result.holds == ResultColumn::Holds::kWritetime || result.holds == ResultColumn::Holds::kTtl) {
      row.push_back(WhenOf(table, result, stored));
      continue;
    }
    // An aggregate's row holds its column's value (Finish folds them); an
    // aliased column names its source.
    const Column* column = table.Find(result.source.empty() ? result.name : result.source);
    if (column == nullptr) {
      row.emplace_back();
    } else if (column->kind == Column::Kind::kPartitionKey) {
      row.emplace_back(partition_key[column->position]);
    } else if (column->kind == Column::Kind::kClustering) {
      row.emplace_back(clustering[column->position]);
    } else if (column->type.multi_cell()) {
      row.push_back(CollectionOf(*column, stored));
    } else {
      std::optional<std::string> value;
      for (const ResultCell& cell : stored.cells()) {
        if (cell.column() == column->storage) value = FromComparable(column->type, cell.value());
      }
      row.push_back(std::move(value));
    }
  }
  CHARYBDIS_ASSERT(row.size() == columns.size());
  return row;
}

}  // namespace charybdis::cql
