#pragma once

// Which rows of a partition a statement's clustering restrictions name:
// what a SELECT reads, and what a range DELETE deletes.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/cql/bindings.h"
#include "core/cql/schema.h"
#include "core/cql/statement.h"

namespace charybdis::cql {

// Which rows of a partition: one row, or the keys in [start, end) (an
// empty end: to the end of the partition).
struct Slice {
  bool single = false;
  std::string key;
  std::string start;
  std::string end;
};

// The values a relation gives its column: one for =, the list for IN
// (literal, markers, or one marker bound to a whole list).
absl::Status AddRelationValues(const Relation& relation, const Column& column, const Bindings& bindings,
                               std::vector<std::string>& values);

// Clustering restrictions: = on a prefix of the clustering columns, then
// at most one column with a range or IN (the last one restricted). One
// slice, or one per IN value in clustering order.
absl::Status ClusteringSlices(const Table& table, const std::vector<Relation>& where, const Bindings& bindings,
                              std::vector<Slice>& slices);

}  // namespace charybdis::cql
