#pragma once

// Splits CQL text into tokens, with their line and column for errors.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace charybdis::cql {

struct Token {
  enum class Kind { kIdentifier, kQuotedIdentifier, kString, kInteger, kFloat, kUuid, kHex, kSymbol, kEnd };
  Kind kind = Kind::kEnd;
  // Identifiers lowercased (quoted ones kept), strings unquoted, symbols
  // as written ("<=", "?", ...).
  std::string text;
  int line = 1;
  int column = 0;
  size_t offset = 0;  // where it starts in the text
};

// The tokens of `text`, ending with a kEnd token; an invalid character or
// an unterminated string is an InvalidArgument "line L:C ..." error.
absl::StatusOr<std::vector<Token>> Tokenize(std::string_view text);

// A script's statements, split at the semicolons outside quotes and
// comments (empty ones dropped), for cqlsh-like files.
absl::StatusOr<std::vector<std::string>> SplitStatements(std::string_view text);

}  // namespace charybdis::cql
