#include "core/cql/bindings.h"

#include "absl/strings/str_cat.h"
#include "core/cql/literal.h"
#include "core/env/assert.h"

namespace charybdis::cql {

absl::StatusOr<Bindings> Bindings::Make(const Prepared& prepared, std::vector<Value> values,
                                        const std::vector<std::string>& names, const FunctionSources* functions) {
  const size_t markers = prepared.markers.size();
  Bindings bindings;
  bindings.functions_ = functions;
  if (!names.empty()) {
    // Named values go to the markers of that name, in any order.
    bindings.values_.assign(markers, Value{true, std::nullopt});
    for (size_t i = 0; i < names.size() && i < values.size(); i++) {
      bool found = false;
      for (size_t marker = 0; marker < markers; marker++) {
        const std::string& name = prepared.parsed.markers[marker].empty() ? prepared.markers[marker].name
                                                                           : prepared.parsed.markers[marker];
        if (name == names[i]) {
          bindings.values_[marker] = values[i];
          found = true;
        }
      }
      if (!found) return absl::InvalidArgumentError(absl::StrCat("Unknown identifier ", names[i]));
    }
  } else {
    if (values.size() != markers) {
      return absl::InvalidArgumentError(absl::StrCat("There were ", markers, " markers(?) in CQL but ", values.size(),
                                                     " bound variables"));
    }
    bindings.values_ = std::move(values);
  }
  CHARYBDIS_ASSERT(bindings.values_.size() == markers);  // one value (or unset) per marker
  for (size_t marker = 0; marker < markers; marker++) {
    const Value& value = bindings.values_[marker];
    if (!value.bytes) continue;
    if (absl::Status valid = ValidateNative(prepared.markers[marker].type, *value.bytes); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid value for ", prepared.markers[marker].name, ": ", valid.message()));
    }
  }
  return bindings;
}

absl::StatusOr<Bound> Bindings::Evaluate(const Term& term, const Type& type) const {
  if (term.kind == Term::Kind::kBindMarker) {
    CHARYBDIS_ASSERT(term.marker >= 0);
    CHARYBDIS_ASSERT(static_cast<size_t>(term.marker) < values_.size());
    const Value& value = values_[term.marker];
    return Bound{value.unset, value.bytes};
  }
  if (term.is_collection()) return Collection(term, type);
  if (term.kind == Term::Kind::kFunction) {
    if (functions_ == nullptr) return absl::InvalidArgumentError(absl::StrCat(term.text, "() is not supported here"));
    absl::StatusOr<std::string> called = CallFunction(term, type, *functions_);
    if (!called.ok()) return called.status();
    return Bound{false, std::move(*called)};
  }
  absl::StatusOr<std::optional<std::string>> literal = LiteralValue(type, term);
  if (!literal.ok()) return literal.status();
  return Bound{false, std::move(*literal)};
}

absl::StatusOr<Bound> Bindings::Collection(const Term& term, const Type& type) const {
  CHARYBDIS_ASSERT(term.is_collection());
  const bool braces = term.kind != Term::Kind::kList;
  const bool fits = type.kind == Kind::kList ? !braces
                    : type.kind == Kind::kSet ? term.kind == Term::Kind::kSet || (term.kind == Term::Kind::kMap && term.elements.empty())
                                              : type.kind == Kind::kMap && term.kind == Term::Kind::kMap;
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid ", braces ? (term.kind == Term::Kind::kSet ? "set" : "map") : "list",
                                                   " literal for a value of type ", TypeName(type)));
  }
  std::vector<std::string> values;
  for (size_t i = 0; i < term.elements.size(); i++) {
    const Type& of = type.params[type.kind == Kind::kMap && i % 2 == 1 ? 1 : 0];
    absl::StatusOr<Bound> element = Evaluate(term.elements[i], of);
    if (!element.ok()) return element.status();
    if (element->unset || !element->value) return absl::InvalidArgumentError("null is not supported inside collections");
    values.push_back(std::move(*element->value));
  }
  if (type.kind != Kind::kMap) return Bound{false, NativeCollection(values)};
  CHARYBDIS_ASSERT(values.size() % 2 == 0);  // the parser pairs them
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < values.size(); i += 2) entries.emplace_back(std::move(values[i]), std::move(values[i + 1]));
  return Bound{false, NativeMap(entries)};
}

absl::StatusOr<std::string> Bindings::Required(const Term& term, const Type& type, std::string_view what) const {
  absl::StatusOr<Bound> bound = Evaluate(term, type);
  if (!bound.ok()) return bound.status();
  if (bound->unset || !bound->value) return absl::InvalidArgumentError(absl::StrCat("Invalid null value for ", std::string(what)));
  return std::move(*bound->value);
}

}  // namespace charybdis::cql
