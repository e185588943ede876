#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cql/functions.h"
#include "core/cql/prepared.h"
#include "core/cql/wire.h"

namespace charybdis::cql {

// A term's value: a native value, null, or unset (a bound value the
// client left out: the column stays as it is).
struct Bound {
  bool unset = false;
  std::optional<std::string> value;
};

// The values of one execution, checked against the markers' types.
class Bindings {
 public:
  // Fails when a value is missing, extra, or not of its marker's type.
  // `functions`: what function terms read (null: they are refused).
  static absl::StatusOr<Bindings> Make(const Prepared& prepared, std::vector<Value> values,
                                       const std::vector<std::string>& names, const FunctionSources* functions);

  absl::StatusOr<Bound> Evaluate(const Term& term, const Type& type) const;
  // Whether the term is a marker the client left unset.
  bool IsUnset(const Term& term) const { return term.kind == Term::Kind::kBindMarker && values_[term.marker].unset; }
  // A value that must be there (keys, LIMIT): null and unset are errors.
  absl::StatusOr<std::string> Required(const Term& term, const Type& type, std::string_view what) const;

 private:
  // A collection literal's native value, its elements evaluated in turn.
  absl::StatusOr<Bound> Collection(const Term& term, const Type& type) const;

  std::vector<Value> values_;
  const FunctionSources* functions_ = nullptr;
};

}  // namespace charybdis::cql
