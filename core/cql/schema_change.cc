#include "core/cql/schema_change.h"

#include "absl/status/status.h"
#include "core/assert.h"

namespace charybdis::cql {

namespace {

constexpr int32_t kSchemaChangeResult = 5;

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

}  // namespace

SchemaChange DescribeSchemaChange(const Statement& statement, const std::string& keyspace) {
  if (const auto* create = std::get_if<CreateKeyspace>(&statement)) return {"CREATED", "KEYSPACE", create->name, ""};
  if (const auto* drop = std::get_if<DropKeyspace>(&statement)) return {"DROPPED", "KEYSPACE", drop->name, ""};
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
    out.Int(kSchemaChangeResult);
    WriteSchemaChange(out, change);
    return {Opcode::kResult, out.Take()};
  };
  return plan;
}

}  // namespace charybdis::cql
