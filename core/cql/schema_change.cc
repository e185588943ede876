#include "core/cql/schema_change.h"

#include "absl/status/status.h"
#include "core/env/assert.h"

namespace charybdis::cql {

namespace {


template <typename Statement>
SchemaChange OfTable(const char* change, const Statement& statement, const std::string& keyspace) {
  return {change, "TABLE", statement.table.keyspace.empty() ? keyspace : statement.table.keyspace,
          statement.table.table};
}

// What the schema agent's refusal is in CQL (its absl::StatusCode).
Error RefusalError(const ClientResponse& response, const SchemaChange& change) {
  switch (static_cast<absl::StatusCode>(response.schema_refusal())) {
    case absl::StatusCode::kAlreadyExists: {
      Writer details;
      details.String(change.keyspace);
      details.String(change.table);
      return {ErrorCode::kAlreadyExists, response.message(), details.Take()};
    }
    case absl::StatusCode::kFailedPrecondition:
      return {ErrorCode::kConfig, response.message(), ""};
    default:
      return {ErrorCode::kInvalid, response.message(), ""};
  }
}

// Whether a driver sees the same columns in the same table.
bool SameTable(const Table& before, const Table& after) {
  if (before.columns.size() != after.columns.size() || !(before.gc == after.gc)) return false;
  for (size_t i = 0; i < before.columns.size(); ++i) {
    const Column &was = before.columns[i], &is = after.columns[i];
    if (was.name != is.name || !(was.type == is.type) || was.kind != is.kind || was.descending != is.descending) {
      return false;
    }
  }
  return true;
}

// kRecreated: dropped, and another thing created under the name since.
enum class Sameness { kSame, kUpdated, kRecreated };

// Adds what `before` has and `after` has not (DROPPED), what both have
// but `compare` finds changed (UPDATED, or DROPPED then CREATED), and what
// `after` has and `before` has not (CREATED).
template <typename Map, typename Describe, typename Compare>
void AddChanges(const Map& before, const Map& after, Describe describe, Compare compare,
                std::vector<SchemaChange>& changes) {
  for (const auto& [name, was] : before) {
    auto it = after.find(name);
    const Sameness sameness = it == after.end() ? Sameness::kRecreated : compare(was, it->second);
    if (sameness == Sameness::kSame) continue;
    if (sameness == Sameness::kUpdated) {
      CHARYBDIS_ASSERT(it != after.end());  // compared only when both have it
      changes.push_back(describe("UPDATED", it->second));
      continue;
    }
    changes.push_back(describe("DROPPED", was));
    if (it != after.end()) changes.push_back(describe("CREATED", it->second));
  }
  for (const auto& [name, is] : after) {
    if (!before.count(name)) changes.push_back(describe("CREATED", is));
  }
}

}  // namespace

std::vector<SchemaChange> SchemaChangesBetween(const Schema& before, const Schema& after) {
  std::vector<SchemaChange> changes;
  AddChanges(
      before.keyspaces(), after.keyspaces(),
      [](const char* change, const Keyspace& keyspace) { return SchemaChange{change, "KEYSPACE", keyspace.name, ""}; },
      [](const Keyspace& was, const Keyspace& is) {
        return was.replication == is.replication ? Sameness::kSame : Sameness::kUpdated;
      },
      changes);
  AddChanges(
      before.tables(), after.tables(),
      [](const char* change, const Table& table) { return SchemaChange{change, "TABLE", table.keyspace, table.name}; },
      [](const Table& was, const Table& is) {
        if (was.storage != is.storage) return Sameness::kRecreated;
        return SameTable(was, is) ? Sameness::kSame : Sameness::kUpdated;
      },
      changes);
  // As Cassandra: a dropped keyspace's tables go without events of their own.
  std::erase_if(changes, [&after](const SchemaChange& change) {
    return change.target == "TABLE" && change.change == "DROPPED" && after.FindKeyspace(change.keyspace) == nullptr;
  });
  return changes;
}

SchemaChange DescribeSchemaChange(const Statement& statement, const std::string& keyspace) {
  if (const auto* create = std::get_if<CreateKeyspace>(&statement)) return {"CREATED", "KEYSPACE", create->name, ""};
  if (const auto* drop = std::get_if<DropKeyspace>(&statement)) return {"DROPPED", "KEYSPACE", drop->name, ""};
  if (const auto* alter = std::get_if<AlterKeyspace>(&statement)) return {"UPDATED", "KEYSPACE", alter->name, ""};
  if (const auto* create = std::get_if<CreateTable>(&statement)) return OfTable("CREATED", *create, keyspace);
  if (const auto* drop = std::get_if<DropTable>(&statement)) return OfTable("DROPPED", *drop, keyspace);
  const auto* alter = std::get_if<AlterTable>(&statement);
  CHARYBDIS_ASSERT(alter != nullptr);
  return OfTable("UPDATED", *alter, keyspace);
}

void WriteSchemaChange(Writer& out, const SchemaChange& change) {
  out.String(change.change);
  out.String(change.target);
  out.String(change.keyspace);
  if (change.target == "TABLE") out.String(change.table);
}

Plan PlanSchemaChange(const Prepared& prepared) {
  CHARYBDIS_ASSERT(IsSchemaChange(prepared.parsed.statement));
  const SchemaChange change = DescribeSchemaChange(prepared.parsed.statement, prepared.keyspace);
  if (change.keyspace.empty()) return {ErrorResponse({ErrorCode::kInvalid, "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename", ""}), {}, {}, {}};
  Plan plan;
  ClientRequest request;
  request.mutable_schema_change()->set_keyspace(prepared.keyspace);
  request.mutable_schema_change()->set_statement(prepared.query);
  plan.requests.push_back(std::move(request));
  plan.finish = [change](const std::vector<ClientResponse>& answers) -> Response {
    const ClientResponse& answer = answers.at(0);
    if (answer.code() == ClientResponse::INVALID_REQUEST && answer.schema_refusal() != 0) {
      return ErrorResponse(RefusalError(answer, change));
    }
    if (answer.code() != ClientResponse::OK) return ErrorResponse(ErrorOf(answer, /*cas=*/true));
    if (answer.schema_sequence() == 0) return VoidResult();  // IF [NOT] EXISTS: nothing to do
    Writer out;
    out.Int(kSchemaChangeResultKind);
    WriteSchemaChange(out, change);
    return {Opcode::kResult, out.Take()};
  };
  return plan;
}

}  // namespace charybdis::cql
