// INSERT, UPDATE, DELETE and BATCH: the writes of ours they become, and
// for IF ..., one conditional write (a Paxos round) with its [applied].

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/cql/clustering_slices.h"
#include "core/cql/plan_parts.h"
#include "core/data/big_endian.h"
#include "core/data/partition.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"

namespace charybdis::cql {
namespace {

class WriteBuilder {
 public:
  WriteBuilder(const Table& table, const Bindings& bindings, const QueryOptions& options, const Using& batch_using)
      : table_(table), bindings_(bindings), options_(options), batch_using_(batch_using) {}

  // The key columns' values, from the INSERT's values or the WHERE's =.
  absl::Status Key(const std::vector<std::pair<std::string, const Term*>>& named, WriteOp& write) {
    std::vector<std::string> partition, clustering;
    for (const Column& column : table_.columns) {
      if (column.kind == Column::Kind::kRegular) break;
      for (const auto& [name, term] : named) {
        if (name != column.name) continue;
        absl::StatusOr<std::string> value = bindings_.Required(*term, column.type, absl::StrCat("primary key part ", name));
        if (!value.ok()) return value.status();
        if (value->size() > 0xFFFF) return absl::InvalidArgumentError(absl::StrCat("Key length of ", value->size(), " is longer than maximum of 65535"));
        if (column.kind == Column::Kind::kPartitionKey && value->empty() && table_.partition_key_count == 1) {
          return absl::InvalidArgumentError("Key may not be empty");
        }
        (column.kind == Column::Kind::kPartitionKey ? partition : clustering).push_back(std::move(*value));
      }
    }
    // Prepare made sure each key column is named exactly once (a range
    // DELETE's clustering columns are not asked for here).
    CHARYBDIS_ASSERT(partition.size() == static_cast<size_t>(table_.partition_key_count));
    CHARYBDIS_ASSERT(clustering.empty() || clustering.size() == static_cast<size_t>(table_.clustering_count));
    write.set_table(table_.storage);
    write.set_partition_key(EncodePartitionKey(table_, partition));
    write.set_clustering_key(EncodeClustering(table_, clustering));
    write.set_consistency(options_.consistency);
    return absl::OkStatus();
  }

  absl::Status Using(const cql::Using& using_, WriteOp& write) {
    const std::optional<Term>& ttl = using_.ttl_seconds ? using_.ttl_seconds : batch_using_.ttl_seconds;
    const std::optional<Term>& timestamp = using_.timestamp_us ? using_.timestamp_us : batch_using_.timestamp_us;
    // An unset TTL or TIMESTAMP is the default (none, and now).
    if (ttl && !bindings_.IsUnset(*ttl)) {
      absl::StatusOr<std::string> value = bindings_.Required(*ttl, Type{Kind::kInt, {}}, "TTL");
      if (!value.ok()) return value.status();
      const int32_t seconds = static_cast<int32_t>(ReadBigEndian(*value, 4));
      if (seconds < 0) return absl::InvalidArgumentError("A TTL must be greater or equal to 0");
      if (seconds > 20 * 365 * 86400) return absl::InvalidArgumentError("ttl is too large: the maximum is 20 years");
      write.set_ttl_seconds(seconds);
    }
    if (timestamp && !bindings_.IsUnset(*timestamp)) {
      absl::StatusOr<std::string> value = bindings_.Required(*timestamp, Type{Kind::kBigint, {}}, "TIMESTAMP");
      if (!value.ok()) return value.status();
      write.set_timestamp(static_cast<int64_t>(ReadBigEndian(*value, 8)));
    } else if (options_.timestamp_us) {
      write.set_timestamp(*options_.timestamp_us);
    }
    return absl::OkStatus();
  }

  // column = value: a put, or a deletion for null; unset leaves it. A
  // non-frozen collection is set whole: its tombstone just before the
  // write, and a cell per element (core/data/cell.h).
  absl::Status Set(const std::string& name, const Term& term, WriteOp& write) {
    CHARYBDIS_ASSERT(table_.Find(name) != nullptr);  // Prepare refused unknown columns
    const Column& column = *table_.Find(name);
    if (column.kind != Column::Kind::kRegular) return absl::OkStatus();
    absl::StatusOr<Bound> bound = bindings_.Evaluate(term, column.type);
    if (!bound.ok()) return bound.status();
    if (bound->unset) return absl::OkStatus();
    if (!bound->value) {
      write.add_delete_column(column.storage);
      return absl::OkStatus();
    }
    if (column.type.multi_cell()) {
      write.add_clear_collection(column.storage);
      return AddElements(column, *bound->value, ColumnValue::APPEND, write);
    }
    ColumnValue* put = write.add_put();
    put->set_column(column.storage);
    put->set_value(ToComparable(column.type, *bound->value));
    return absl::OkStatus();
  }

  // An UPDATE's assignment (Prepare checked its column and operation).
  absl::Status Assign(const Assignment& assignment, WriteOp& write) {
    if (assignment.op == Assignment::Op::kSet) return Set(assignment.column, assignment.value, write);
    const Column& column = *table_.Find(assignment.column);
    CHARYBDIS_ASSERT(column.type.multi_cell());
    if (assignment.op == Assignment::Op::kSetElement) return SetEntry(column, assignment, write);
    const bool remove = assignment.op == Assignment::Op::kRemove;
    // A map loses entries by a set of keys.
    const Type type = column.type.kind == Kind::kMap && remove ? Type{Kind::kSet, {column.type.params[0]}} : column.type;
    absl::StatusOr<Bound> bound = bindings_.Evaluate(assignment.value, type);
    if (!bound.ok()) return bound.status();
    if (bound->unset) return absl::OkStatus();
    if (!bound->value) return absl::InvalidArgumentError(absl::StrCat("Invalid null value for ", column.name, " in an addition or removal"));
    if (!remove) {
      return AddElements(column, *bound->value,
                         assignment.op == Assignment::Op::kPrepend ? ColumnValue::PREPEND : ColumnValue::APPEND, write);
    }
    std::optional<std::vector<std::string>> keys = SplitCollection(*bound->value);
    CHARYBDIS_ASSERT(keys.has_value());  // bound values are checked, literals made well
    for (const std::string& key : *keys) {
      write.add_delete_column(ElementCellName(column.storage, ToComparable(column.type.params[0], key)));
    }
    return absl::OkStatus();
  }

  // m[k] = v: one entry, or its deletion for null.
  absl::Status SetEntry(const Column& column, const Assignment& assignment, WriteOp& write) {
    CHARYBDIS_ASSERT(column.type.kind == Kind::kMap);  // Prepare refused the others
    absl::StatusOr<std::string> key = bindings_.Required(assignment.element, column.type.params[0], absl::StrCat("key of ", column.name));
    if (!key.ok()) return key.status();
    absl::StatusOr<Bound> value = bindings_.Evaluate(assignment.value, column.type.params[1]);
    if (!value.ok()) return value.status();
    if (value->unset) return absl::OkStatus();
    const std::string cell = ElementCellName(column.storage, ToComparable(column.type.params[0], *key));
    if (!value->value) {
      write.add_delete_column(cell);
      return absl::OkStatus();
    }
    ColumnValue* put = write.add_put();
    put->set_column(cell);
    put->set_value(ToComparable(column.type.params[1], *value->value));
    return absl::OkStatus();
  }

  // A cell per element of a collection's native value: a set's element and
  // a map's key name their cells; a list's are named by the coordinator,
  // after the list's elements or before them (`place`).
  absl::Status AddElements(const Column& column, const std::string& native, ColumnValue::Place place, WriteOp& write) {
    const Type& type = column.type;
    if (type.kind == Kind::kMap) {
      std::optional<std::vector<std::pair<std::string, std::string>>> entries = SplitMap(native);
      CHARYBDIS_ASSERT(entries.has_value());  // bound values are checked, literals made well
      for (const auto& [key, value] : *entries) {
        ColumnValue* put = write.add_put();
        put->set_column(ElementCellName(column.storage, ToComparable(type.params[0], key)));
        put->set_value(ToComparable(type.params[1], value));
      }
      return absl::OkStatus();
    }
    std::optional<std::vector<std::string>> elements = SplitCollection(native);
    CHARYBDIS_ASSERT(elements.has_value());
    for (const std::string& element : *elements) {
      ColumnValue* put = write.add_put();
      if (type.kind == Kind::kSet) {
        put->set_column(ElementCellName(column.storage, ToComparable(type.params[0], element)));
        continue;
      }
      put->set_column(column.storage);
      put->set_place(place);
      put->set_value(ToComparable(type.params[0], element));
    }
    return absl::OkStatus();
  }

  // What a condition compares: the column's cell, a map entry's, or a
  // non-frozen collection's live elements (Condition.compared).
  absl::Status Compared(const Column& column, const Condition& condition, charybdis::Condition& out) {
    const std::string what = absl::StrCat("condition on ", column.name);
    if (condition.element) {
      const Type& key_type = column.type.params[0];
      const Type& value_type = column.type.params[1];
      absl::StatusOr<std::string> key = bindings_.Required(*condition.element, key_type, what);
      if (!key.ok()) return key.status();
      absl::StatusOr<std::string> value = bindings_.Required(condition.value, value_type, what);
      if (!value.ok()) return value.status();
      out.set_column(ElementCellName(column.storage, ToComparable(key_type, *key)));
      out.set_value(ToComparable(value_type, *value));
      return absl::OkStatus();
    }
    absl::StatusOr<std::string> value = bindings_.Required(condition.value, column.type, what);
    if (!value.ok()) return value.status();
    out.set_column(column.storage);
    if (!column.type.multi_cell()) {
      out.set_value(ToComparable(column.type, *value));
      return absl::OkStatus();
    }
    // As the stored elements are: a set's by element, a map's by key
    // with its value, a list's values in order (core/data/cell.h).
    const Type& type = column.type;
    std::vector<std::pair<std::string, std::string>> elements;
    const std::string canonical = ToComparable(type, *value);
    if (type.kind == Kind::kMap) {
      const std::optional<std::vector<std::pair<std::string, std::string>>> entries = SplitMap(canonical);
      CHARYBDIS_ASSERT(entries.has_value());  // bound values are checked, literals made well
      for (const auto& [key, entry] : *entries) {
        elements.emplace_back(ToComparable(type.params[0], key), ToComparable(type.params[1], entry));
      }
    } else {
      const std::optional<std::vector<std::string>> values = SplitCollection(canonical);
      CHARYBDIS_ASSERT(values.has_value());
      for (const std::string& element : *values) {
        elements.emplace_back(type.kind == Kind::kSet ? ToComparable(type.params[0], element) : "",
                              type.kind == Kind::kSet ? "" : ToComparable(type.params[0], element));
      }
    }
    out.set_compared(type.kind == Kind::kList ? charybdis::Condition::ELEMENT_VALUES : charybdis::Condition::ELEMENTS);
    out.set_value(ElementsForm(elements, type.kind != Kind::kList));
    return absl::OkStatus();
  }

  absl::Status Conditions(const IfClause& clause, CasStatement& statement) {
    statement.set_if_exists(clause.exists);
    statement.set_if_not_exists(clause.not_exists);
    for (const Condition& condition : clause.conditions) {
      CHARYBDIS_ASSERT(table_.Find(condition.column) != nullptr);
      const Column& column = *table_.Find(condition.column);
      charybdis::Condition* out = statement.add_condition();
      if (absl::Status compared = Compared(column, condition, *out); !compared.ok()) return compared;
      out->set_op(condition.op == Operator::kEq   ? charybdis::Condition::EQ
                  : condition.op == Operator::kNe ? charybdis::Condition::NE
                  : condition.op == Operator::kLt ? charybdis::Condition::LT
                  : condition.op == Operator::kLe ? charybdis::Condition::LE
                  : condition.op == Operator::kGt ? charybdis::Condition::GT
                                                  : charybdis::Condition::GE);
    }
    return absl::OkStatus();
  }

  absl::Status Build(const Insert& insert, CasStatement& out) {
    CHARYBDIS_ASSERT(insert.values.size() == insert.columns.size());  // the parser's check
    std::vector<std::pair<std::string, const Term*>> named;
    for (size_t i = 0; i < insert.columns.size(); i++) named.emplace_back(insert.columns[i], &insert.values[i]);
    WriteOp& write = *out.mutable_write();
    if (absl::Status key = Key(named, write); !key.ok()) return key;
    if (absl::Status using_ = Using(insert.using_, write); !using_.ok()) return using_;
    ColumnValue* marker = write.add_put();
    marker->set_column(kRowMarker);
    for (const auto& [name, term] : named) {
      if (absl::Status set = Set(name, *term, write); !set.ok()) return set;
    }
    return Conditions(insert.if_, out);
  }

  absl::Status Build(const Update& update, CasStatement& out) {
    WriteOp& write = *out.mutable_write();
    if (absl::Status key = Key(WhereTerms(update.where), write); !key.ok()) return key;
    if (absl::Status using_ = Using(update.using_, write); !using_.ok()) return using_;
    for (const Assignment& assignment : update.set) {
      if (absl::Status assigned = Assign(assignment, write); !assigned.ok()) return assigned;
    }
    return Conditions(update.if_, out);
  }

  absl::Status Build(const Delete& del, CasStatement& out) {
    WriteOp& write = *out.mutable_write();
    if (del.using_.ttl_seconds) return absl::InvalidArgumentError("A DELETE takes no TTL");
    if (IsRangeDelete(table_, del)) return BuildRange(del, write);
    if (absl::Status key = Key(WhereTerms(del.where), write); !key.ok()) return key;
    if (absl::Status using_ = Using(del.using_, write); !using_.ok()) return using_;
    for (const Deletion& deletion : del.columns) {
      const Column* column = table_.Find(deletion.column);
      CHARYBDIS_ASSERT(column != nullptr);  // Prepare refused unknown columns
      if (!deletion.element) {
        write.add_delete_column(column->storage);  // a collection's tombstone, for one
        continue;
      }
      CHARYBDIS_ASSERT(column->type.kind == Kind::kMap);  // Prepare refused the others
      absl::StatusOr<std::string> key = bindings_.Required(*deletion.element, column->type.params[0], absl::StrCat("key of ", column->name));
      if (!key.ok()) return key.status();
      write.add_delete_column(ElementCellName(column->storage, ToComparable(column->type.params[0], *key)));
    }
    write.set_delete_row(del.columns.empty());
    return Conditions(del.if_, out);
  }

 private:
  // A DELETE of a partition or of a range of its rows: a range tombstone
  // over the slice a SELECT with the same WHERE reads.
  absl::Status BuildRange(const Delete& del, WriteOp& write) {
    std::vector<std::pair<std::string, const Term*>> partition;
    for (const auto& [name, term] : WhereTerms(del.where)) {
      const Column* column = table_.Find(name);
      if (column != nullptr && column->kind == Column::Kind::kPartitionKey) partition.emplace_back(name, term);
    }
    if (absl::Status key = Key(partition, write); !key.ok()) return key;
    if (absl::Status using_ = Using(del.using_, write); !using_.ok()) return using_;
    std::vector<Slice> slices;
    if (absl::Status sliced = ClusteringSlices(table_, del.where, bindings_, slices); !sliced.ok()) return sliced;
    // Prepare refused IN, and a range DELETE gives no whole key.
    CHARYBDIS_ASSERT(slices.size() == 1 && !slices[0].single);
    write.clear_clustering_key();
    // An empty slice (ck > 5 AND ck < 3) deletes nothing: the write is
    // left out, as an UPDATE whose values are all unset.
    if (ClusteringRange{slices[0].start, slices[0].end}.empty()) return absl::OkStatus();
    write.set_delete_range(true);
    write.set_range_start(slices[0].start);
    write.set_range_end(slices[0].end);
    return absl::OkStatus();
  }

  static std::vector<std::pair<std::string, const Term*>> WhereTerms(const std::vector<Relation>& where) {
    std::vector<std::pair<std::string, const Term*>> named;
    for (const Relation& relation : where) named.emplace_back(relation.column, &relation.terms[0]);
    return named;
  }

  const Table& table_;
  const Bindings& bindings_;
  const QueryOptions& options_;
  const cql::Using& batch_using_;
};

// Conditional writes answer [applied], and when not applied the rows the
// conditions saw (all their columns: a superset of Cassandra's answer).
Response CasResult(const Table& table, const std::vector<std::string>& partition_key, const ClientResponse& response) {
  ResultSet result;
  result.columns.push_back({table.keyspace, table.name, "[applied]", Type{Kind::kBoolean, {}}});
  if (response.applied() || response.rows().empty()) {
    result.rows.push_back({NativeBoolean(response.applied())});
    return RowsResult(result, false);
  }
  std::vector<ResultColumn> columns;
  for (const Column& column : table.columns) columns.push_back({table.keyspace, table.name, column.name, column.type});
  for (const charybdis::ResultRow& stored : response.rows()) {
    ResultRow row = AssembleRow(table, columns, partition_key, stored);
    row.insert(row.begin(), NativeBoolean(false));
    result.rows.push_back(std::move(row));
  }
  result.columns.insert(result.columns.end(), columns.begin(), columns.end());
  return RowsResult(result, false);
}

Plan Conditional(const std::shared_ptr<const Prepared>& prepared, std::vector<CasStatement> statements,
                 const QueryOptions& options) {
  const Table& table = *prepared->table;
  Plan plan;
  CasOp* cas = plan.requests.emplace_back().mutable_cas();
  for (std::string& column : table.StorageColumns()) cas->add_column(std::move(column));
  // Paxos stamps the write with its ballot: the client's default
  // timestamp is dropped (USING TIMESTAMP was refused when prepared).
  for (CasStatement& statement : statements) {
    statement.mutable_write()->clear_timestamp();
    *cas->add_statement() = std::move(statement);
  }
  cas->set_serial_consistency(options.serial_consistency == CL_LOCAL_SERIAL ? CL_LOCAL_SERIAL : CL_SERIAL);
  cas->set_commit_consistency(IsSerial(options.consistency) ? CL_QUORUM : options.consistency);
  CHARYBDIS_ASSERT(cas->statement_size() > 0);  // a conditional statement writes
  const std::vector<std::string> partition_key = DecodePartitionKey(table, cas->statement(0).write().partition_key());
  plan.finish = [prepared, partition_key](const std::vector<ClientResponse>& responses) {
    if (responses[0].code() != ClientResponse::OK) return ErrorResponse(ErrorOf(responses[0], true));
    return CasResult(*prepared->table, partition_key, responses[0]);
  };
  return plan;
}

}  // namespace

absl::StatusOr<std::vector<CasStatement>> BuildWrites(const Prepared& prepared, const Bindings& bindings,
                                                      const QueryOptions& options) {
  static const Using kNoUsing;
  const Batch* batch = std::get_if<Batch>(&prepared.parsed.statement);
  std::vector<const Modification*> modifications;
  Modification single;
  if (batch != nullptr) {
    for (const Modification& statement : batch->statements) modifications.push_back(&statement);
  } else {
    std::visit([&](const auto& statement) {
      if constexpr (std::is_constructible_v<Modification, decltype(statement)>) single = statement;
    }, prepared.parsed.statement);
    modifications.push_back(&single);
  }
  WriteBuilder builder(*prepared.table, bindings, options, batch != nullptr ? batch->using_ : kNoUsing);
  std::vector<CasStatement> statements;
  for (const Modification* modification : modifications) {
    absl::Status built = std::visit([&](const auto& statement) { return builder.Build(statement, statements.emplace_back()); },
                                    *modification);
    if (!built.ok()) return built;
  }
  CHARYBDIS_ASSERT(statements.size() == modifications.size());
  return statements;
}

Plan WritePlan(const std::shared_ptr<const Prepared>& table_of, std::vector<CasStatement> statements, bool conditional,
               Batching batching, const QueryOptions& options) {
  if (conditional) return Conditional(table_of, std::move(statements), options);
  Plan plan;
  BatchOp* batch = nullptr;
  for (CasStatement& statement : statements) {
    const WriteOp& write = statement.write();
    // An UPDATE whose values were all left unset changes nothing.
    if (write.put_size() == 0 && write.delete_column_size() == 0 && write.clear_collection_size() == 0 &&
        !write.delete_row() && !write.delete_range()) {
      continue;
    }
    if (batching == Batching::kNone) {
      *plan.requests.emplace_back().mutable_write() = std::move(*statement.mutable_write());
      continue;
    }
    if (batch == nullptr) {
      batch = plan.requests.emplace_back().mutable_batch();
      batch->set_logged(batching == Batching::kLogged);
      batch->set_consistency(options.consistency);
    }
    *batch->add_write() = std::move(*statement.mutable_write());
  }
  plan.finish = [](const std::vector<ClientResponse>& responses) {
    for (const ClientResponse& response : responses) {
      if (response.code() != ClientResponse::OK) return ErrorResponse(ErrorOf(response, false));
    }
    return VoidResult();
  };
  return plan;
}

}  // namespace charybdis::cql
