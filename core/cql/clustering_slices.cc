#include "core/cql/clustering_slices.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

// IN on the clustering column after the = prefix: one slice per distinct
// value, in clustering order (Cassandra sorts and dedupes them too).
std::vector<Slice> InSlices(const Table& table, std::vector<std::string> prefix, const std::vector<std::string>& values) {
  std::map<std::string, Slice> slices;  // by key: clustering order
  for (const std::string& value : values) {
    prefix.push_back(value);
    const std::string key = EncodeClustering(table, prefix);
    const bool whole = static_cast<int>(prefix.size()) == table.clustering_count;
    slices[key] = whole ? Slice{true, key, "", ""} : Slice{false, "", key, PrefixEnd(key)};
    prefix.pop_back();
  }
  std::vector<Slice> ordered;
  for (auto& [key, slice] : slices) ordered.push_back(std::move(slice));
  CHARYBDIS_ASSERT(ordered.size() <= values.size());
  return ordered;
}

}  // namespace

absl::Status AddRelationValues(const Relation& relation, const Column& column, const Bindings& bindings,
                               std::vector<std::string>& values) {
  if (relation.bound_list) {
    absl::StatusOr<std::string> list = bindings.Required(relation.terms[0], Type{Kind::kList, {column.type}}, absl::StrCat("IN on ", column.name));
    if (!list.ok()) return list.status();
    // Checked when bound: a well-formed list of the column's type.
    std::optional<std::vector<std::string>> elements = SplitCollection(*list);
    CHARYBDIS_ASSERT(elements.has_value());
    for (std::string& value : *elements) values.push_back(std::move(value));
    return absl::OkStatus();
  }
  for (const Term& term : relation.terms) {
    absl::StatusOr<std::string> value = bindings.Required(term, column.type, column.name);
    if (!value.ok()) return value.status();
    values.push_back(std::move(*value));
  }
  return absl::OkStatus();
}

absl::Status ClusteringSlices(const Table& table, const std::vector<Relation>& where, const Bindings& bindings,
                              std::vector<Slice>& slices) {
  Slice slice;
  std::vector<std::string> prefix;
  std::optional<std::vector<std::string>> in_values;
  const Column* range_column = nullptr;
  std::vector<const Relation*> range;
  for (int i = 0; i < table.clustering_count; i++) {
    const Column& column = table.columns[table.partition_key_count + i];
    std::vector<const Relation*> relations;
    for (const Relation& relation : where) {
      if (relation.column == column.name) relations.push_back(&relation);
    }
    if (relations.empty()) continue;
    if (range_column != nullptr || in_values || static_cast<int>(prefix.size()) != i) {
      return absl::InvalidArgumentError(absl::StrCat("PRIMARY KEY column \"", column.name,
                                                     "\" cannot be restricted as preceding column is not restricted by ="));
    }
    if (relations.size() == 1 && relations[0]->op == Operator::kEq) {
      absl::StatusOr<std::string> value = bindings.Required(relations[0]->terms[0], column.type, column.name);
      if (!value.ok()) return value.status();
      prefix.push_back(std::move(*value));
      continue;
    }
    if (relations.size() == 1 && relations[0]->op == Operator::kIn) {
      in_values.emplace();
      if (absl::Status added = AddRelationValues(*relations[0], column, bindings, *in_values); !added.ok()) return added;
      continue;
    }
    for (const Relation* relation : relations) {
      if (relation->op == Operator::kEq || relation->op == Operator::kIn || relation->op == Operator::kNe) {
        return absl::InvalidArgumentError(absl::StrCat("only one range (<, <=, >, >=) or one = is supported on ", column.name));
      }
    }
    range_column = &column;
    range = relations;
  }
  if (in_values) {
    slices = InSlices(table, std::move(prefix), *in_values);
    return absl::OkStatus();
  }
  const std::string encoded_prefix = EncodeClustering(table, prefix);
  if (range_column == nullptr && static_cast<int>(prefix.size()) == table.clustering_count) {
    slice.single = true;
    slice.key = encoded_prefix;
    slices = {slice};
    return absl::OkStatus();
  }
  slice.start = encoded_prefix;
  slice.end = PrefixEnd(encoded_prefix);
  for (const Relation* relation : range) {
    absl::StatusOr<std::string> value = bindings.Required(relation->terms[0], range_column->type, range_column->name);
    if (!value.ok()) return value.status();
    prefix.push_back(std::move(*value));
    const std::string bound = EncodeClustering(table, prefix);
    prefix.pop_back();
    // In byte order a DESC column's larger values come first.
    const bool lower = (relation->op == Operator::kGt || relation->op == Operator::kGe) != range_column->descending;
    const bool inclusive = relation->op == Operator::kGe || relation->op == Operator::kLe;
    if (lower) {
      slice.start = std::max(slice.start, inclusive ? bound : PrefixEnd(bound));
    } else {
      const std::string end = inclusive ? PrefixEnd(bound) : bound;
      if (slice.end.empty() || end < slice.end) slice.end = end;
    }
  }
  slices = {slice};
  return absl::OkStatus();
}

}  // namespace charybdis::cql
