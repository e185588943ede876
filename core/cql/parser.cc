#include "core/cql/parser.h"

#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/cql/lexer.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

// Recursive descent over the tokens. The first error sticks: later calls
// return quickly and Parse reports that one.
class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<ParsedStatement> Run() {
    // Tokenize ends every statement with kEnd, which Peek stops at.
    CHARYBDIS_ASSERT(!tokens_.empty());
    CHARYBDIS_ASSERT(tokens_.back().kind == Token::Kind::kEnd);
    ParsedStatement parsed{ParseStatement(), {}};
    Accept(";");
    if (error_.ok() && Peek().kind != Token::Kind::kEnd) Fail("extraneous input '" + Peek().text + "' expecting <EOF>");
    if (!error_.ok()) return error_;
    CHARYBDIS_ASSERT(Peek().kind == Token::Kind::kEnd);
    parsed.markers = std::move(markers_);
    return parsed;
  }

 private:
  const Token& Peek(size_t ahead = 0) const { return tokens_[std::min(at_ + ahead, tokens_.size() - 1)]; }
  bool IsWord(std::string_view word, size_t ahead = 0) const {
    return Peek(ahead).kind == Token::Kind::kIdentifier && Peek(ahead).text == word;
  }
  bool IsSymbol(std::string_view symbol) const {
    return Peek().kind == Token::Kind::kSymbol && Peek().text == symbol;
  }

  void Fail(const std::string& what) {
    if (!error_.ok()) return;
    error_ = absl::InvalidArgumentError(absl::StrCat("line ", Peek().line, ":", Peek().column, " ", what));
  }
  void Expected(std::string_view what) {
    const std::string found = Peek().kind == Token::Kind::kEnd ? "<EOF>" : Peek().text;
    Fail(absl::StrCat("mismatched input '", found, "' expecting ", std::string(what)));
  }

  // A keyword or symbol: consumed if next.
  bool Accept(std::string_view word) {
    if (!error_.ok()) return false;
    if (IsWord(word) || IsSymbol(word)) {
      at_++;
      CHARYBDIS_ASSERT(at_ < tokens_.size());  // never past kEnd
      return true;
    }
    return false;
  }
  void Expect(std::string_view word) {
    if (Accept(word)) return;
    std::string upper(word);
    for (char& c : upper) c = absl::ascii_toupper(static_cast<unsigned char>(c));
    Expected(upper);
  }

  std::string Identifier() {
    const Token& token = Peek();
    if (error_.ok() && (token.kind == Token::Kind::kIdentifier || token.kind == Token::Kind::kQuotedIdentifier)) {
      at_++;
      CHARYBDIS_ASSERT(at_ < tokens_.size());
      return token.text;
    }
    Expected("an identifier");
    return "";
  }

  // a, b, c
  std::vector<std::string> IdentifierList() {
    std::vector<std::string> names;
    do names.push_back(Identifier());
    while (Accept(","));
    return names;
  }

  TableName QualifiedName() {
    TableName name{"", Identifier()};
    if (Accept(".")) {
      name.keyspace = name.table;
      name.table = Identifier();
    }
    return name;
  }

  Statement ParseStatement() {
    if (Accept("select")) return ParseSelect();
    if (Accept("insert")) return ParseInsert();
    if (Accept("update")) return ParseUpdate();
    if (Accept("delete")) return ParseDelete();
    if (Accept("begin")) return ParseBatch();
    if (Accept("use")) return Use{Identifier()};
    if (Accept("create")) {
      if (Accept("keyspace")) return ParseCreateKeyspace();
      if (Accept("table") || Accept("columnfamily")) return ParseCreateTable();
      if (Accept("role")) return ParseCreateRole();
      Expected("KEYSPACE, TABLE or ROLE");
      return Use{};
    }
    if (Accept("drop")) {
      if (Accept("keyspace")) {
        DropKeyspace drop;
        drop.if_exists = IfExists();
        drop.name = Identifier();
        return drop;
      }
      if (Accept("table") || Accept("columnfamily")) {
        DropTable drop;
        drop.if_exists = IfExists();
        drop.table = QualifiedName();
        return drop;
      }
      if (Accept("role")) return ParseDropRole();
      Expected("KEYSPACE, TABLE or ROLE");
      return Use{};
    }
    if (Accept("alter")) {
      if (Accept("table") || Accept("columnfamily")) return ParseAlterTable();
      if (Accept("keyspace")) return ParseAlterKeyspace();
      if (Accept("role")) return ParseAlterRole();
      Expected("KEYSPACE, TABLE or ROLE");
      return Use{};
    }
    if (Accept("list")) return Accept("roles") ? Statement(ListRoles{}) : ParseListPermissions();
    if (IsWord("grant") || IsWord("revoke")) return ParseGrant();
    Fail(absl::StrCat("no viable alternative at input '", Peek().text, "'"));
    return Use{};
  }

  // A collection literal or a function call: each nests terms, and a
  // statement's nesting is bounded, so that no text (up to the frame limit) runs
  // the parser, the checks or the evaluation out of stack.
  Term Nested(const std::function<Term()>& parse) {
    static constexpr int kMaxDepth = 16;
    if (depth_ >= kMaxDepth) {
      Fail(absl::StrCat("terms nest more than ", kMaxDepth, " levels deep"));
      return Term{};
    }
    depth_++;
    Term term = parse();
    depth_--;
    return term;
  }

  // [a, b], {a, b}, {k: v, ...} or {}.
  Term ParseCollectionLiteral() {
    Term term;
    const bool list = Accept("[");
    if (!list) Expect("{");
    term.kind = list ? Term::Kind::kList : Term::Kind::kSet;
    const std::string_view close = list ? "]" : "}";
    if (!list && IsSymbol("}")) term.kind = Term::Kind::kMap;  // {}: as its column is
    while (error_.ok() && !IsSymbol(close)) {
      term.elements.push_back(ParseTerm());
      const bool first = term.elements.size() == 1;
      if (!list && first && Accept(":")) term.kind = Term::Kind::kMap;
      if (term.kind == Term::Kind::kMap && !first) Expect(":");
      if (term.kind == Term::Kind::kMap) term.elements.push_back(ParseTerm());
      if (!Accept(",")) break;
    }
    Expect(close);
    CHARYBDIS_ASSERT(!error_.ok() || term.kind != Term::Kind::kMap || term.elements.size() % 2 == 0);
    return term;
  }

  // name(argument, ...): constants and calls, no bind markers (their
  // types would be the function's to give).
  Term ParseFunctionCall() {
    Term term;
    term.kind = Term::Kind::kFunction;
    term.text = Identifier();
    Expect("(");
    while (error_.ok() && !IsSymbol(")")) {
      if (IsSymbol("?") || IsSymbol(":") || IsSymbol("[") || IsSymbol("{")) {
        Fail(absl::StrCat("the arguments of ", term.text, "() are constants and function calls"));
      }
      term.elements.push_back(ParseTerm());
      if (!Accept(",")) break;
    }
    Expect(")");
    return term;
  }

  Term ParseTerm() {
    if (IsSymbol("[") || IsSymbol("{")) return Nested([this] { return ParseCollectionLiteral(); });
    Term term;
    const Token& token = Peek();
    if (IsSymbol("?") || IsSymbol(":")) {
      at_++;
      term.kind = Term::Kind::kBindMarker;
      term.marker = static_cast<int>(markers_.size());
      markers_.push_back(token.text == ":" ? Identifier() : "");
      CHARYBDIS_ASSERT(markers_.size() == static_cast<size_t>(term.marker) + 1);
      return term;
    }
    term.text = token.text;
    switch (token.kind) {
      case Token::Kind::kString: term.kind = Term::Kind::kString; break;
      case Token::Kind::kInteger: term.kind = Term::Kind::kInteger; break;
      case Token::Kind::kFloat: term.kind = Term::Kind::kFloat; break;
      case Token::Kind::kUuid: term.kind = Term::Kind::kUuid; break;
      case Token::Kind::kHex: term.kind = Term::Kind::kHex; break;
      case Token::Kind::kIdentifier:
        if (Peek(1).text == "(") return Nested([this] { return ParseFunctionCall(); });
        if (token.text == "true" || token.text == "false") {
          term.kind = Term::Kind::kBoolean;
        } else if (token.text == "null") {
          term.kind = Term::Kind::kNull;
        } else if (token.text == "nan" || token.text == "infinity") {
          term.kind = Term::Kind::kFloat;
        } else {
          Expected("a constant or a bind marker");
        }
        break;
      default:
        Expected("a constant or a bind marker");
    }
    if (error_.ok()) at_++;
    CHARYBDIS_ASSERT(at_ < tokens_.size());
    return term;
  }

  std::optional<Operator> ParseOperator() {
    for (const auto& [symbol, op] : {std::pair{"=", Operator::kEq}, {"!=", Operator::kNe}, {"<=", Operator::kLe},
                                     {">=", Operator::kGe}, {"<", Operator::kLt}, {">", Operator::kGt}}) {
      if (Accept(symbol)) return op;
    }
    if (Accept("in")) return Operator::kIn;
    Expected("an operator");
    return std::nullopt;
  }

  std::vector<Term> ParseTermList() {
    std::vector<Term> terms;
    Expect("(");
    if (!IsSymbol(")")) {
      do terms.push_back(ParseTerm());
      while (Accept(","));
    }
    Expect(")");
    return terms;
  }

  Relation ParseRelation() {
    Relation relation;
    if (IsWord("token") && Peek(1).text == "(") {
      at_++;
      Expect("(");
      relation.token = IdentifierList();
      Expect(")");
    } else {
      relation.column = Identifier();
    }
    relation.op = ParseOperator().value_or(Operator::kEq);
    if (relation.op == Operator::kIn) {
      relation.bound_list = IsSymbol("?") || IsSymbol(":");
      relation.terms = relation.bound_list ? std::vector<Term>{ParseTerm()} : ParseTermList();
    } else if (!relation.token.empty() && IsWord("token")) {
      at_++;
      relation.token_on_right = true;
      relation.terms = ParseTermList();
    } else {
      relation.terms.push_back(ParseTerm());
    }
    CHARYBDIS_ASSERT(relation.column.empty() || relation.token.empty());  // a column or token(...)
    CHARYBDIS_ASSERT(!relation.bound_list || relation.terms.size() == 1);
    CHARYBDIS_ASSERT(!relation.token_on_right || !relation.token.empty());
    return relation;
  }

  std::vector<Relation> ParseWhere() {
    std::vector<Relation> where;
    Expect("where");
    do where.push_back(ParseRelation());
    while (error_.ok() && Accept("and"));
    return where;
  }

  // column, or function(column, ...), then perhaps AS alias.
  Selector ParseSelector() {
    static const std::pair<const char*, Selector::Function> kFunctions[] = {
        {"writetime", Selector::Function::kWritetime}, {"ttl", Selector::Function::kTtl},
        {"token", Selector::Function::kToken},         {"count", Selector::Function::kCount},
        {"min", Selector::Function::kMin},             {"max", Selector::Function::kMax},
        {"sum", Selector::Function::kSum},             {"avg", Selector::Function::kAvg}};
    Selector selector;
    for (const auto& [name, function] : kFunctions) {
      if (!IsWord(name) || Peek(1).text != "(") continue;
      selector.function = function;
      at_ += 2;
      if (function == Selector::Function::kCount && (Accept("*") || (Peek().text == "1" && (at_++, true)))) {
        Expect(")");  // count(*): the rows (an empty column)
        break;
      }
      selector.arguments = IdentifierList();
      Expect(")");
      selector.column = selector.arguments.empty() ? "" : selector.arguments[0];
      if (function != Selector::Function::kToken && selector.arguments.size() != 1) {
        Fail(absl::StrCat("Invalid number of arguments in call to function ", name, ": 1 required but ",
                          selector.arguments.size(), " provided"));
      }
      break;
    }
    if (selector.function == Selector::Function::kNone) selector.column = Identifier();
    if (Accept("as")) selector.alias = Identifier();
    return selector;
  }

  Statement ParseSelect() {
    Select select;
    if (Accept("json")) Fail("SELECT JSON is not supported");
    if (Accept("*")) {
      // every column
    } else if (IsWord("count") && Peek(1).text == "(" && (Peek(2).text == "*" || Peek(2).text == "1") &&
               Peek(3).text == ")" && IsWord("from", 4)) {
      // COUNT(*) alone, which scans count too; beside others, an aggregate.
      at_ += 3;
      Expect(")");
      select.count = true;
    } else {
      do select.columns.push_back(ParseSelector());
      while (error_.ok() && Accept(","));
    }
    Expect("from");
    select.table = QualifiedName();
    if (IsWord("where")) select.where = ParseWhere();
    if (Accept("order")) {
      Expect("by");
      std::string column = Identifier();
      const bool descending = Accept("desc");
      if (!descending) Accept("asc");
      select.order_by = {column, descending};
    }
    if (Accept("limit")) select.limit = ParseTerm();
    if (Accept("allow")) Expect("filtering");
    return select;
  }

  Using ParseUsing() {
    Using using_;
    if (!Accept("using")) return using_;
    do {
      if (Accept("ttl")) {
        using_.ttl_seconds = ParseTerm();
      } else if (Accept("timestamp")) {
        using_.timestamp_us = ParseTerm();
      } else {
        Expected("TTL or TIMESTAMP");
      }
    } while (error_.ok() && Accept("and"));
    return using_;
  }

  IfClause ParseIf(bool allow_not_exists) {
    IfClause clause;
    if (!Accept("if")) return clause;
    if (allow_not_exists && Accept("not")) {
      Expect("exists");
      clause.not_exists = true;
    } else if (Accept("exists")) {
      clause.exists = true;
    } else {
      do {
        Condition condition;
        condition.column = Identifier();
        if (Accept("[")) {
          condition.element = ParseTerm();
          Expect("]");
        }
        condition.op = ParseOperator().value_or(Operator::kEq);
        if (condition.op == Operator::kIn) Fail("IF ... IN is not supported");
        condition.value = ParseTerm();
        clause.conditions.push_back(std::move(condition));
      } while (error_.ok() && Accept("and"));
    }
    CHARYBDIS_ASSERT(!clause.exists || !clause.not_exists);
    return clause;
  }

  Insert ParseInsert() {
    Insert insert;
    Expect("into");
    insert.table = QualifiedName();
    Expect("(");
    insert.columns = IdentifierList();
    Expect(")");
    Expect("values");
    insert.values = ParseTermList();
    if (error_.ok() && insert.values.size() != insert.columns.size()) {
      Fail("unmatched column names/values: the INSERT names " + std::to_string(insert.columns.size()) +
           " columns and gives " + std::to_string(insert.values.size()) + " values");
    }
    // Cassandra takes IF NOT EXISTS before or after USING.
    insert.if_ = ParseIf(true);
    insert.using_ = ParseUsing();
    if (!insert.if_.any()) insert.if_ = ParseIf(true);
    if (insert.if_.exists || !insert.if_.conditions.empty()) Fail("an INSERT takes only IF NOT EXISTS");
    // Prepare pairs the columns with the values by index.
    CHARYBDIS_ASSERT(!error_.ok() || insert.values.size() == insert.columns.size());
    return insert;
  }

  // c = v | c = c + v | c = c - v | c = v + c | c[k] = v
  Assignment ParseAssignment() {
    Assignment assignment;
    assignment.column = Identifier();
    if (Accept("[")) {
      assignment.op = Assignment::Op::kSetElement;
      assignment.element = ParseTerm();
      Expect("]");
      Expect("=");
      assignment.value = ParseTerm();
      return assignment;
    }
    Expect("=");
    if (Peek().kind == Token::Kind::kIdentifier && Peek().text == assignment.column &&
        (Peek(1).text == "+" || Peek(1).text == "-")) {
      at_++;
      assignment.op = Accept("+") ? Assignment::Op::kAdd : (Expect("-"), Assignment::Op::kRemove);
      assignment.value = ParseTerm();
      return assignment;
    }
    assignment.value = ParseTerm();
    if (Accept("+")) {
      assignment.op = Assignment::Op::kPrepend;
      if (Identifier() != assignment.column) Fail(absl::StrCat("Only expressions of the form X = <value> + X are supported."));
    }
    return assignment;
  }

  Update ParseUpdate() {
    Update update;
    update.table = QualifiedName();
    update.using_ = ParseUsing();
    Expect("set");
    do update.set.push_back(ParseAssignment());
    while (error_.ok() && Accept(","));
    CHARYBDIS_ASSERT(!update.set.empty());
    update.where = ParseWhere();
    update.if_ = ParseIf(false);
    return update;
  }

  Delete ParseDelete() {
    Delete del;
    while (error_.ok() && !IsWord("from")) {
      Deletion deletion{Identifier(), std::nullopt};
      if (Accept("[")) {
        deletion.element = ParseTerm();
        Expect("]");
      }
      del.columns.push_back(std::move(deletion));
      if (!Accept(",")) break;
    }
    Expect("from");
    del.table = QualifiedName();
    del.using_ = ParseUsing();
    del.where = ParseWhere();
    del.if_ = ParseIf(false);
    return del;
  }

  Statement ParseBatch() {
    Batch batch;
    if (Accept("unlogged")) {
      batch.logged = false;
    } else if (Accept("counter")) {
      Fail("counter batches are not supported");
    } else {
      Accept("logged");
    }
    Expect("batch");
    batch.using_ = ParseUsing();
    while (error_.ok() && !IsWord("apply")) {
      if (Accept("insert")) {
        batch.statements.push_back(ParseInsert());
      } else if (Accept("update")) {
        batch.statements.push_back(ParseUpdate());
      } else if (Accept("delete")) {
        batch.statements.push_back(ParseDelete());
      } else {
        Expected("INSERT, UPDATE, DELETE or APPLY");
      }
      Accept(";");
    }
    Expect("apply");
    Expect("batch");
    return batch;
  }

  std::map<std::string, std::string> ParseMapLiteral() {
    std::map<std::string, std::string> map;
    Expect("{");
    while (error_.ok() && !IsSymbol("}")) {
      const std::string key = ParseTerm().text;
      Expect(":");
      map[key] = ParseTerm().text;
      if (!Accept(",")) break;
    }
    Expect("}");
    return map;
  }

  bool IfNotExists() {
    if (!Accept("if")) return false;
    Expect("not");
    Expect("exists");
    return true;
  }

  bool IfExists() {
    if (!Accept("if")) return false;
    Expect("exists");
    return true;
  }

  // ALTER TABLE t ADD c type | ADD (c type, ...) | DROP c | DROP (c, ...)
  //           | WITH option = value AND ...
  Statement ParseAlterTable() {
    AlterTable alter;
    alter.table = QualifiedName();
    if (Accept("with")) {
      do {
        ParseTableOption(alter.gc, /*others_ignored=*/false);
      } while (error_.ok() && Accept("and"));
      return alter;
    }
    const bool add = Accept("add");
    if (!add && !Accept("drop")) {
      Expected("ADD, DROP or WITH");
      return alter;
    }
    const bool listed = Accept("(");
    do {
      if (add) {
        ColumnDefinition column{Identifier(), ""};
        column.type = TypeText();
        alter.add.push_back(std::move(column));
      } else {
        alter.drop.push_back(Identifier());
      }
    } while (listed && error_.ok() && Accept(","));
    if (listed) Expect(")");
    CHARYBDIS_ASSERT(alter.add.empty() || alter.drop.empty());  // ADD or DROP, not both
    return alter;
  }

  Statement ParseCreateRole() {
    CreateRole create;
    create.if_not_exists = IfNotExists();
    create.name = RoleName();
    if (Accept("with")) create.options = ParseRoleOptions();
    return create;
  }

  Statement ParseAlterRole() {
    AlterRole alter;
    alter.name = RoleName();
    Expect("with");
    alter.options = ParseRoleOptions();
    return alter;
  }

  Statement ParseDropRole() {
    DropRole drop;
    drop.if_exists = IfExists();
    drop.name = RoleName();
    return drop;
  }

  // LIST ALL PERMISSIONS | LIST permission, [ON resource] [OF role] [NORECURSIVE].
  Statement ParseListPermissions() {
    ListPermissions list;
    list.permission = PermissionName();
    if (Accept("on")) list.resource = ParsePermissionResource();
    if (Accept("of")) list.role = RoleName();
    Accept("norecursive");
    return list;
  }

  // GRANT permissions ON resource TO role | REVOKE ... FROM role, or
  // GRANT role TO role | REVOKE role FROM role.
  Statement ParseGrant() {
    GrantPermissions grant;
    grant.revoke = Accept("revoke");
    if (!grant.revoke) Expect("grant");
    // A role's name then TO (FROM): no permission list is followed by it.
    if (IsWord(grant.revoke ? "from" : "to", 1) && !IsWord("all")) {
      GrantRole role_grant;
      role_grant.revoke = grant.revoke;
      role_grant.granted = RoleName();
      Expect(grant.revoke ? "from" : "to");
      role_grant.role = RoleName();
      return role_grant;
    }
    do grant.permissions.push_back(PermissionName());
    while (error_.ok() && Accept(","));
    Expect("on");
    grant.resource = ParsePermissionResource();
    Expect(grant.revoke ? "from" : "to");
    grant.role = RoleName();
    return grant;
  }

  // ALL [PERMISSIONS], or a permission's name [PERMISSION]: checked
  // against the known ones where the statement runs.
  std::string PermissionName() {
    if (Accept("all")) {
      Accept("permissions");
      return "ALL";
    }
    std::string name = Identifier();
    Accept("permission");
    for (char& c : name) c = absl::ascii_toupper(static_cast<unsigned char>(c));
    return name;
  }

  // ALL KEYSPACES | KEYSPACE ks | [TABLE] [ks.]table
  PermissionResource ParsePermissionResource() {
    if (Accept("all")) {
      Expect("keyspaces");
      return {};
    }
    if (Accept("keyspace")) return {Identifier(), ""};
    Accept("table");
    const TableName name = QualifiedName();
    return {name.keyspace, name.table};
  }

  // A role's name: an identifier, or a string literal as Cassandra allows.
  std::string RoleName() {
    if (Peek().kind == Token::Kind::kString) {
      const std::string name = Peek().text;
      at_++;
      CHARYBDIS_ASSERT(at_ < tokens_.size());
      return name;
    }
    return Identifier();
  }

  // PASSWORD = 'text' AND LOGIN = bool AND SUPERUSER = bool, each at most
  // once; constants only (a password never travels as a bind marker here).
  RoleOptions ParseRoleOptions() {
    RoleOptions options;
    do {
      const std::string option = Identifier();
      Expect("=");
      const Term value = ParseTerm();
      if (!error_.ok()) break;
      const bool is_password = option == "password";
      if (!is_password && option != "login" && option != "superuser") {
        Fail("role options are PASSWORD, LOGIN and SUPERUSER, not '" + option + "'");
      } else if (value.kind != (is_password ? Term::Kind::kString : Term::Kind::kBoolean)) {
        Fail(absl::StrCat("role option '", option, "' takes ", is_password ? "a string" : "true or false"));
      } else if (is_password ? options.password.has_value()
                             : (option == "login" ? options.login : options.superuser).has_value()) {
        Fail("role option '" + option + "' is given twice");
      } else if (is_password) {
        options.password = value.text;
      } else {
        (option == "login" ? options.login : options.superuser) = value.text == "true";
      }
    } while (error_.ok() && Accept("and"));
    return options;
  }

  Statement ParseCreateKeyspace() {
    CreateKeyspace create;
    create.if_not_exists = IfNotExists();
    create.name = Identifier();
    create.replication = KeyspaceProperties();
    return create;
  }

  Statement ParseAlterKeyspace() {
    AlterKeyspace alter;
    alter.name = Identifier();
    alter.replication = KeyspaceProperties();
    return alter;
  }

  // WITH replication = {...} AND durable_writes = ...: the replication map
  // (durable_writes is taken and ignored: every write is durable).
  std::map<std::string, std::string> KeyspaceProperties() {
    std::map<std::string, std::string> replication;
    Expect("with");
    do {
      const std::string option = Identifier();
      Expect("=");
      if (option == "replication") {
        replication = ParseMapLiteral();
      } else if (option == "durable_writes") {
        ParseTerm();
      } else {
        Fail("unknown keyspace property '" + option + "'");
      }
    } while (error_.ok() && Accept("and"));
    return replication;
  }

  void ParsePrimaryKey(CreateTable& create) {
    Expect("(");
    if (Accept("(")) {
      create.partition_key = IdentifierList();
      Expect(")");
    } else {
      create.partition_key.push_back(Identifier());
    }
    while (error_.ok() && Accept(",")) create.clustering.push_back(Identifier());
    Expect(")");
    CHARYBDIS_ASSERT(!create.partition_key.empty());
  }

  // A type name as text: a word, or word<...> with nested angle brackets.
  std::string TypeText() {
    std::string text = Identifier();
    if (!IsSymbol("<")) return text;
    int depth = 0;
    do {
      if (IsSymbol("<")) depth++;
      if (IsSymbol(">")) depth--;
      text += Peek().text;
      at_++;
      CHARYBDIS_ASSERT(at_ < tokens_.size());  // only a token before kEnd was taken
    } while (error_.ok() && depth > 0 && Peek().kind != Token::Kind::kEnd);
    return text;
  }

  void ParseTableOptions(CreateTable& create) {
    do {
      if (Accept("clustering")) {
        Expect("order");
        Expect("by");
        Expect("(");
        do {
          const std::string column = Identifier();
          create.descending[column] = Accept("desc");
          if (!create.descending[column]) Accept("asc");
        } while (Accept(","));
        Expect(")");
      } else if (Accept("compact")) {
        Fail("COMPACT STORAGE is not supported");
      } else {
        ParseTableOption(create.gc, /*others_ignored=*/true);
      }
    } while (error_.ok() && Accept("and"));
  }

  // option = value: tombstone GC's options are kept; others are accepted
  // and ignored when `others_ignored` (CREATE TABLE's), else refused (an
  // ALTER TABLE ... WITH that changes nothing must not answer OK).
  void ParseTableOption(TableGcOptions& gc, bool others_ignored) {
    const std::string option = Identifier();
    Expect("=");
    if (option == "tombstone_gc") {
      if (!IsSymbol("{")) return Fail("tombstone_gc takes a map: {'mode': ..., 'propagation_delay_in_seconds': ...}");
      gc.tombstone_gc = ParseMapLiteral();
    } else if (option == "gc_grace_seconds") {
      if (IsSymbol("{")) return Fail("gc_grace_seconds takes a number of seconds");
      gc.gc_grace_seconds = ParseTerm().text;
    } else if (others_ignored) {
      IsSymbol("{") ? (void)ParseMapLiteral() : (void)ParseTerm();
    } else {
      Fail("ALTER TABLE ... WITH takes gc_grace_seconds and tombstone_gc, not '" + option + "'");
    }
  }

  Statement ParseCreateTable() {
    CreateTable create;
    create.if_not_exists = IfNotExists();
    create.table = QualifiedName();
    Expect("(");
    do {
      if (Accept("primary")) {
        Expect("key");
        ParsePrimaryKey(create);
        continue;
      }
      ColumnDefinition column{Identifier(), TypeText()};
      if (Accept("static")) Fail("static columns are not supported");
      if (Accept("primary")) {
        Expect("key");
        create.partition_key = {column.name};
      }
      create.columns.push_back(std::move(column));
    } while (error_.ok() && Accept(","));
    Expect(")");
    if (Accept("with")) ParseTableOptions(create);
    return create;
  }

  std::vector<Token> tokens_;
  size_t at_ = 0;
  int depth_ = 0;  // of the term being parsed (Nested)
  std::vector<std::string> markers_;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<ParsedStatement> Parse(std::string_view text) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(text);
  if (!tokens.ok()) return tokens.status();
  return Parser(std::move(*tokens)).Run();
}

}  // namespace charybdis::cql
