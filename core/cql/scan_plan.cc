// SELECT without a partition key: a scan of the table in ring order
// (ScanOp), within token() bounds if given, a page at a time.

#include <algorithm>
#include <limits>
#include <memory>

#include "core/env/assert.h"
#include "core/cql/plan_parts.h"
#include "core/data/big_endian.h"
#include "core/data/token.h"

namespace charybdis::cql {
namespace {

constexpr Token kMaximumToken = std::numeric_limits<Token>::max();

// Where the previous page stopped: after the row (partition key,
// clustering key) of `token`, with `returned` rows returned so far. The
// leading -1 tells it from a SELECT of partitions' paging state.
struct ScanPagingState {
  int32_t returned = 0;
  Token token = 0;
  std::string partition_key;
  std::string clustering_key;
};

std::string EncodeScanPaging(const ScanPagingState& state) {
  Writer out;
  out.Int(-1);
  out.Int(state.returned);
  out.Long(state.token);
  out.Bytes(state.partition_key);
  out.Bytes(state.clustering_key);
  return out.Take();
}

std::optional<ScanPagingState> DecodeScanPaging(std::string_view bytes) {
  Reader in(bytes);
  const int32_t marker = in.Int();
  ScanPagingState state;
  state.returned = in.Int();
  state.token = in.Long();
  state.partition_key = in.Bytes().bytes.value_or("");
  state.clustering_key = in.Bytes().bytes.value_or("");
  if (!in.ok() || !in.AtEnd() || marker != -1 || state.returned < 0 || state.partition_key.empty() ||
      TokenOf(state.partition_key) != state.token) {
    return std::nullopt;
  }
  return state;
}

// The token() bounds as (start, end]: > and >= raise the start, < and <=
// lower the end, = does both. False when nothing can match.
absl::StatusOr<bool> TokenBounds(const Select& select, const Bindings& bindings, Token& start, Token& end) {
  start = kMinimumToken;
  end = kMaximumToken;
  for (const Relation& relation : select.where) {
    absl::StatusOr<std::string> bound =
        bindings.Required(relation.terms.at(0), Type{Kind::kBigint, {}}, "partition key token");
    if (!bound.ok()) return bound.status();
    const Token token = static_cast<Token>(ReadBigEndian(*bound, 8));
    const bool lower = relation.op == Operator::kGt || relation.op == Operator::kGe || relation.op == Operator::kEq;
    const bool upper = relation.op == Operator::kLt || relation.op == Operator::kLe || relation.op == Operator::kEq;
    const bool inclusive = relation.op != Operator::kGt && relation.op != Operator::kLt;
    // >= the least token bounds nothing below (no key has it).
    if (lower && !(inclusive && token == kMinimumToken)) start = std::max(start, inclusive ? token - 1 : token);
    if (upper) {
      if (!inclusive && token == kMinimumToken) return false;  // < the least token: nothing
      end = std::min(end, inclusive ? token : token - 1);
    }
  }
  return start < end;
}

// `paged`: a full page gets a paging state, unless it ends the LIMIT.
Response FinishScan(const Prepared& prepared, const ScanPagingState& from, uint32_t wanted, bool paged,
                    bool skip_metadata, const ClientResponse& response) {
  if (response.code() != ClientResponse::OK) return ErrorResponse(ErrorOf(response, false));
  const Table& table = *prepared.table;
  const Select& select = std::get<Select>(prepared.parsed.statement);
  ResultSet result;
  result.columns = prepared.result_columns;
  if (select.count) {
    result.rows.push_back({NativeBigint(static_cast<int64_t>(response.row_count()))});
    return RowsResult(result, skip_metadata);
  }
  for (const charybdis::ResultRow& row : response.rows()) {
    const std::vector<std::string> partition_key = DecodePartitionKey(table, row.partition_key());
    result.rows.push_back(AssembleRow(table, prepared.result_columns, partition_key, row));
  }
  // A full page may have more after it (Cassandra pages the same way).
  if (paged && static_cast<uint32_t>(response.rows_size()) == wanted && wanted > 0) {
    CHARYBDIS_ASSERT(response.rows_size() > 0);
    const charybdis::ResultRow& last = response.rows(response.rows_size() - 1);
    result.paging_state = EncodeScanPaging({from.returned + response.rows_size(), TokenOf(last.partition_key()),
                                            last.partition_key(), last.clustering_key()});
  }
  return RowsResult(result, skip_metadata);
}

}  // namespace

Plan PlanScan(const std::shared_ptr<const Prepared>& prepared, const Bindings& bindings, const QueryOptions& options) {
  const Table& table = *prepared->table;
  const Select& select = std::get<Select>(prepared->parsed.statement);
  CHARYBDIS_ASSERT(IsScan(table, select));
  Token start = 0, end = 0;
  absl::StatusOr<bool> any = TokenBounds(select, bindings, start, end);
  if (!any.ok()) return InvalidPlan(std::string(any.status().message()));
  absl::StatusOr<std::optional<int32_t>> limit = LimitOf(select, bindings);
  if (!limit.ok()) return InvalidPlan(std::string(limit.status().message()));
  ScanPagingState from;
  if (options.paging_state && !select.count) {
    std::optional<ScanPagingState> state = DecodeScanPaging(*options.paging_state);
    // A paging state from another statement's range would read outside this one.
    if (!state || state->token <= start || state->token > end) {
      return ErrorPlan({ErrorCode::kProtocol, "Invalid value for the paging state", ""});
    }
    from = *state;
  }
  // How many rows this request reads: a page, or the rest of the LIMIT.
  uint32_t wanted = std::numeric_limits<uint32_t>::max();
  bool paged = options.page_size > 0 && !select.count;
  if (paged) wanted = static_cast<uint32_t>(options.page_size);
  if (*limit) {
    const uint32_t rest = static_cast<uint32_t>(std::max(0, **limit - from.returned));
    paged = paged && rest > wanted;  // a page that reaches the LIMIT is the last
    wanted = std::min(wanted, rest);
  }
  CHARYBDIS_ASSERT(!paged || wanted > 0);  // a page reads something
  Plan plan;
  if (*any && wanted > 0) {
    ClientRequest request;
    ScanOp* scan = request.mutable_scan();
    scan->set_table(table.storage);
    scan->set_start_token(options.paging_state && !select.count ? from.token : start);
    scan->set_end_token(end);
    scan->set_resume(options.paging_state.has_value() && !select.count);
    scan->set_after_partition_key(from.partition_key);
    scan->set_after_clustering_key(from.clustering_key);
    scan->set_limit(wanted);
    scan->set_consistency(options.consistency);
    scan->set_count_only(select.count);
    for (std::string& column : table.StorageColumns()) scan->add_column(std::move(column));
    plan.requests.push_back(std::move(request));
  }
  // The statement is shared, not copied: the answer may outlive the call.
  plan.finish = [prepared, from, wanted, paged, skip_metadata = options.skip_metadata](
                    const std::vector<ClientResponse>& responses) {
    ClientResponse nothing;
    nothing.set_code(ClientResponse::OK);
    return FinishScan(*prepared, from, wanted, paged, skip_metadata, responses.empty() ? nothing : responses[0]);
  };
  return plan;
}

}  // namespace charybdis::cql
