#include "core/cql/lexer.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

bool IsIdentifierChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// 8-4-4-4-12 hex digits at the start of `text`.
bool StartsWithUuid(std::string_view text) {
  if (text.size() < 36) return false;
  for (size_t i = 0; i < 36; i++) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return text.size() == 36 || !IsIdentifierChar(text[36]);
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaceAndComments();
      Token token{Token::Kind::kEnd, "", line_, static_cast<int>(at_ - line_start_), at_};
      if (at_ >= text_.size()) {
        tokens.push_back(token);
        return tokens;
      }
      if (absl::Status read = Next(token); !read.ok()) return read;
      // Every token takes at least one character, and no more than remain.
      CHARYBDIS_ASSERT(at_ > token.offset);
      CHARYBDIS_ASSERT(at_ <= text_.size());
      tokens.push_back(std::move(token));
    }
  }

 private:
  void SkipSpaceAndComments() {
    while (at_ < text_.size()) {
      const std::string_view rest = text_.substr(at_);
      if (rest[0] == '\n') {
        at_++;
        line_++;
        line_start_ = at_;
      } else if (absl::ascii_isspace(static_cast<unsigned char>(rest[0]))) {
        at_++;
      } else if (rest.substr(0, 2) == "--" || rest.substr(0, 2) == "//") {
        while (at_ < text_.size() && text_[at_] != '\n') at_++;
      } else {
        return;
      }
    }
    CHARYBDIS_ASSERT(at_ == text_.size());
  }

  absl::Status Error(const Token& token, std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("line ", token.line, ":", token.column, " ", std::string(what)));
  }

  absl::Status Next(Token& token) {
    CHARYBDIS_ASSERT(at_ < text_.size());  // Run stops at the end
    const std::string_view rest = text_.substr(at_);
    const char c = rest[0];
    if (StartsWithUuid(rest)) return Take(token, Token::Kind::kUuid, 36);
    if ((c == '0') && rest.size() > 1 && (rest[1] == 'x' || rest[1] == 'X')) {
      size_t end = 2;
      while (end < rest.size() && absl::ascii_isxdigit(static_cast<unsigned char>(rest[end]))) end++;
      return TakeSkipping(token, Token::Kind::kHex, end, 2);
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && rest.size() > 1 && absl::ascii_isdigit(static_cast<unsigned char>(rest[1])))) {
      return Number(token, rest);
    }
    if (absl::ascii_isalpha(static_cast<unsigned char>(c))) {
      size_t end = 0;
      while (end < rest.size() && IsIdentifierChar(rest[end])) end++;
      (void)Take(token, Token::Kind::kIdentifier, end);
      for (char& letter : token.text) letter = absl::ascii_tolower(static_cast<unsigned char>(letter));
      return absl::OkStatus();
    }
    if (c == '\'' || c == '"') return Quoted(token, c);
    for (std::string_view symbol : {"<=", ">=", "!=", "(", ")", ",", ";", ".", "*", "=", "<", ">", "?", ":", "{", "}", "[", "]", "+", "-"}) {
      if (rest.substr(0, symbol.size()) == symbol) return Take(token, Token::Kind::kSymbol, symbol.size());
    }
    // The whole character (a UTF-8 sequence), so that the message is text.
    size_t length = 1;
    while (length < rest.size() && length < 4 && (static_cast<unsigned char>(rest[length]) & 0xC0) == 0x80) length++;
    return Error(token, absl::StrCat("token recognition error at: '", std::string(rest.substr(0, length)), "'"));
  }

  absl::Status Number(Token& token, std::string_view rest) {
    size_t end = rest[0] == '-' ? 1 : 0;
    bool is_float = false;
    while (end < rest.size()) {
      const char d = rest[end];
      if (absl::ascii_isdigit(static_cast<unsigned char>(d))) {
        end++;
      } else if (d == '.' || d == 'e' || d == 'E') {
        is_float = true;
        end++;
        if ((d == 'e' || d == 'E') && end < rest.size() && (rest[end] == '-' || rest[end] == '+')) end++;
      } else {
        break;
      }
    }
    CHARYBDIS_ASSERT(end >= 1);  // a digit, or '-' then a digit
    CHARYBDIS_ASSERT(end <= rest.size());
    return Take(token, is_float ? Token::Kind::kFloat : Token::Kind::kInteger, end);
  }

  // 'string' with '' for a quote; "Identifier" with "" for a double quote.
  absl::Status Quoted(Token& token, char quote) {
    std::string value;
    size_t i = at_ + 1;
    while (true) {
      if (i >= text_.size()) return Error(token, "unterminated quoted text");
      if (text_[i] == quote) {
        if (i + 1 < text_.size() && text_[i + 1] == quote) {
          value.push_back(quote);
          i += 2;
          continue;
        }
        break;
      }
      if (text_[i] == '\n') {
        line_++;
        line_start_ = i + 1;
      }
      value.push_back(text_[i++]);
    }
    CHARYBDIS_ASSERT(i < text_.size());  // at the closing quote
    at_ = i + 1;
    token.kind = quote == '\'' ? Token::Kind::kString : Token::Kind::kQuotedIdentifier;
    token.text = std::move(value);
    return absl::OkStatus();
  }

  absl::Status Take(Token& token, Token::Kind kind, size_t length) {
    CHARYBDIS_ASSERT(length >= 1);
    CHARYBDIS_ASSERT(at_ + length <= text_.size());
    token.kind = kind;
    token.text = std::string(text_.substr(at_, length));
    at_ += length;
    return absl::OkStatus();
  }

  // Take, then the token's text without its first `skip` characters.
  absl::Status TakeSkipping(Token& token, Token::Kind kind, size_t length, size_t skip) {
    CHARYBDIS_ASSERT(skip <= length);
    (void)Take(token, kind, length);
    token.text = token.text.substr(skip);
    return absl::OkStatus();
  }

  std::string_view text_;
  size_t at_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Tokenize(std::string_view text) { return Lexer(text).Run(); }

absl::StatusOr<std::vector<std::string>> SplitStatements(std::string_view text) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(text);
  if (!tokens.ok()) return tokens.status();
  std::vector<std::string> statements;
  size_t start = std::string_view::npos;
  for (const Token& token : *tokens) {
    const bool end = token.kind == Token::Kind::kEnd || (token.kind == Token::Kind::kSymbol && token.text == ";");
    if (end && start != std::string_view::npos) {
      CHARYBDIS_ASSERT(token.offset >= start);
      CHARYBDIS_ASSERT(token.offset <= text.size());
      std::string statement(text.substr(start, token.offset - start));
      while (!statement.empty() && absl::ascii_isspace(static_cast<unsigned char>(statement.back()))) statement.pop_back();
      statements.push_back(std::move(statement));
      start = std::string_view::npos;
    } else if (!end && start == std::string_view::npos) {
      start = token.offset;
    }
  }
  return statements;
}

}  // namespace charybdis::cql
