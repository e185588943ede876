#include "sim/cql_statements.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "core/data/big_endian.h"
#include "core/data/token.h"
#include "core/env/assert.h"
#include "sim/cql_frames.h"

namespace charybdis::sim {

namespace {

using Type = GeneratedSchema::Type;

const char* TypeName(Type type) {
  switch (type) {
    case Type::kInt: return "int";
    case Type::kBigint: return "bigint";
    case Type::kText: return "text";
  }
  CHARYBDIS_ASSERT(false);
  return "";
}

// Clustering columns of two rows' keys: row index / kSecondColumnValues
// and row index % kSecondColumnValues.
constexpr uint32_t kSecondColumnValues = 4;

// Where bigint partition keys start: past 2^40, so that no four bytes of
// one are another's.
constexpr int64_t kBigintPartitionBase = int64_t{1} << 40;

// A composite key's second column holds the index plus this.
constexpr int64_t kPartitionColumnStep = 1000;

// No partition's index is as high: a returned key past it names none.
constexpr int64_t kMaxPartitionIndex = int64_t{1} << 32;

// A bigint clustering value lies this far below its index: negative keys
// sort below positive ones only if the sign is read.
constexpr int64_t kBigintClusteringOffset = 2;

// A column's type, drawn: ints mostly.
Type RandomType(Random& random) {
  const uint64_t draw = random.Below(4);
  return draw == 0 ? Type::kText : draw == 1 ? Type::kBigint : Type::kInt;
}

}  // namespace

std::string GeneratedSchema::PartitionColumns() const {
  std::vector<std::string> names;
  for (const Column& column : partition) names.push_back(column.name);
  return absl::StrJoin(names, ", ");
}

std::vector<std::string> GeneratedSchema::PartitionLiterals(int64_t index) const {
  CHARYBDIS_ASSERT(index >= 0 && index <= kMaxPartitionIndex);
  std::vector<std::string> literals;
  for (size_t i = 0; i < partition.size(); i++) {
    const int64_t number = index + kPartitionColumnStep * static_cast<int64_t>(i);
    switch (partition[i].type) {
      case Type::kInt: literals.push_back(absl::StrCat(number)); break;
      case Type::kBigint: literals.push_back(absl::StrCat(kBigintPartitionBase + number)); break;
      case Type::kText: literals.push_back(absl::StrCat("'p", number, "'")); break;
    }
  }
  CHARYBDIS_ASSERT(literals.size() == partition.size());
  return literals;
}

std::string GeneratedSchema::WherePartition(int64_t index) const {
  const std::vector<std::string> literals = PartitionLiterals(index);
  std::vector<std::string> equals;
  for (size_t i = 0; i < partition.size(); i++) equals.push_back(absl::StrCat(partition[i].name, " = ", literals[i]));
  return absl::StrCat(" WHERE ", absl::StrJoin(equals, " AND "));
}

int64_t GeneratedSchema::PartitionToken(int64_t index) const {
  CHARYBDIS_ASSERT(index >= 0);
  std::string key;
  for (size_t i = 0; i < partition.size(); i++) {
    const int64_t number = index + kPartitionColumnStep * static_cast<int64_t>(i);
    std::string bytes;
    switch (partition[i].type) {
      case Type::kInt: AppendBigEndian(bytes, static_cast<uint64_t>(number), 4); break;
      case Type::kBigint: AppendBigEndian(bytes, static_cast<uint64_t>(kBigintPartitionBase + number), 8); break;
      case Type::kText: bytes = absl::StrCat("p", number); break;
    }
    if (partition.size() == 1) return TokenOf(bytes);
    AppendBigEndian(key, bytes.size(), 2);
    absl::StrAppend(&key, bytes, std::string(1, '\0'));
  }
  return TokenOf(key);
}

std::optional<int64_t> GeneratedSchema::PartitionIndexOf(const std::vector<model::Value>& key) const {
  if (key.size() != partition.size() || key.empty()) return std::nullopt;
  int64_t index = -1;
  if (partition[0].type == Type::kText) {
    const auto* text = std::get_if<std::string>(&key[0]);
    if (text == nullptr || text->size() < 2 || (*text)[0] != 'p' || !absl::SimpleAtoi(text->substr(1), &index)) {
      return std::nullopt;
    }
  } else if (const auto* number = std::get_if<int64_t>(&key[0]); number != nullptr) {
    const bool bigint = partition[0].type == Type::kBigint;
    if (bigint && *number < kBigintPartitionBase) return std::nullopt;
    index = bigint ? *number - kBigintPartitionBase : *number;
  }
  // Past the bound no partition's index lies, nor would its literals
  // compute without overflow.
  if (index < 0 || index > kMaxPartitionIndex) return std::nullopt;
  // Every column as the index makes it: 'p01' names none, nor does a pk2
  // of another partition.
  const std::vector<std::string> literals = PartitionLiterals(index);
  for (size_t i = 0; i < key.size(); i++) {
    if (literals[i] != CqlLiteral(key[i])) return std::nullopt;
  }
  return index;
}

std::vector<std::string> GeneratedSchema::Ddl(const std::string& replication) const {
  std::vector<std::string> columns;
  for (const Column& column : partition) columns.push_back(absl::StrCat(column.name, " ", TypeName(column.type)));
  std::vector<std::string> key{partition.size() == 1 ? partition[0].name : absl::StrCat("(", PartitionColumns(), ")")};
  std::vector<std::string> order;
  for (size_t i = 0; i < clustering.size(); i++) {
    columns.push_back(absl::StrCat(clustering[i].name, " ", TypeName(clustering[i].type)));
    key.push_back(clustering[i].name);
    order.push_back(absl::StrCat(clustering[i].name, descending[i] ? " DESC" : " ASC"));
  }
  for (const Column& column : regular) columns.push_back(absl::StrCat(column.name, " ", TypeName(column.type)));
  for (const Column& column : sets) columns.push_back(absl::StrCat(column.name, " set<", TypeName(column.type), ">"));
  return {absl::StrCat("CREATE KEYSPACE ", keyspace, " WITH replication = ", replication),
          absl::StrCat("CREATE TABLE ", QualifiedTable(), " (", absl::StrJoin(columns, ", "), ", PRIMARY KEY (",
                       absl::StrJoin(key, ", "), ")) WITH CLUSTERING ORDER BY (", absl::StrJoin(order, ", "), ")")};
}

GeneratedSchema RandomSchema(const std::string& keyspace, Random& random, bool with_set) {
  GeneratedSchema schema;
  schema.keyspace = keyspace;
  schema.table = "t";
  schema.partition[0].type = RandomType(random);
  if (random.Chance(0.25)) schema.partition.push_back({"pk2", RandomType(random)});
  const int clustering = random.Chance(0.5) ? 1 : 2;
  for (int i = 0; i < clustering; i++) {
    schema.clustering.push_back({absl::StrCat("c", i + 1), random.Chance(0.5) ? Type::kText : RandomType(random)});
    schema.descending.push_back(random.Chance(0.5));
  }
  schema.regular = {{"v1", Type::kInt}, {"v2", Type::kText}};
  if (random.Chance(0.5)) schema.regular.push_back({"v3", Type::kBigint});
  if (with_set) schema.sets.push_back({"s", Type::kInt});
  return schema;
}

StatementGenerator::StatementGenerator(GeneratedSchema schema, const scenario::CqlWorkload& spec)
    : schema_(std::move(schema)), spec_(spec) {
  CHARYBDIS_ASSERT(!schema_.clustering.empty());
  CHARYBDIS_ASSERT(schema_.clustering.size() <= 2);
  CHARYBDIS_ASSERT(schema_.descending.size() == schema_.clustering.size());
  CHARYBDIS_ASSERT(spec_.partitions() > 0);
  CHARYBDIS_ASSERT(spec_.rows_per_partition() > 0);
}

model::Key StatementGenerator::RowKey(uint32_t index) const {
  model::Key key;
  const bool two = schema_.clustering.size() == 2;
  const uint32_t values[] = {two ? index / kSecondColumnValues : index, index % kSecondColumnValues};
  for (size_t i = 0; i < schema_.clustering.size(); i++) {
    switch (schema_.clustering[i].type) {
      case Type::kText: key.push_back(absl::StrCat("r", values[i] < 10 ? "0" : "", values[i])); break;
      case Type::kInt: key.push_back(static_cast<int64_t>(values[i])); break;
      case Type::kBigint: key.push_back(static_cast<int64_t>(values[i]) - kBigintClusteringOffset); break;
    }
  }
  return key;
}

model::Value StatementGenerator::RandomValue(Random& random, Type type) const {
  // Few values, so that conditions often hold and often do not.
  switch (type) {
    case Type::kInt: return random.Between(0, 4);
    case Type::kBigint: return random.Between(-2, 2);
    case Type::kText: return std::string(1, static_cast<char>('a' + random.Below(4)));
  }
  CHARYBDIS_ASSERT(false);
  return int64_t{0};
}

std::string StatementGenerator::WhereRow(int64_t partition, const model::Key& key) const {
  std::string where = schema_.WherePartition(partition);
  for (size_t i = 0; i < key.size(); i++) {
    absl::StrAppend(&where, " AND ", schema_.clustering[i].name, " = ", CqlLiteral(key[i]));
  }
  return where;
}

GeneratedOp StatementGenerator::Next(Random& random) const {
  const int64_t partition = static_cast<int64_t>(random.Below(spec_.partitions()));
  const double draw = random.Unit();
  if (draw < spec_.serial_read_fraction()) return SerialRead(random, partition);
  GeneratedOp generated;
  generated.op.kind = model::LwtOp::Kind::kConditional;
  generated.op.partition = absl::StrCat(partition);
  const bool batch = draw < spec_.serial_read_fraction() + spec_.batch_fraction() && spec_.rows_per_partition() > 1;
  const uint32_t statements = batch ? static_cast<uint32_t>(random.Between(2, 3)) : 1;
  std::vector<uint32_t> rows;
  while (rows.size() < std::min(statements, spec_.rows_per_partition())) {
    const uint32_t row = static_cast<uint32_t>(random.Below(spec_.rows_per_partition()));
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
  }
  std::vector<std::string> texts;
  for (uint32_t row : rows) {
    auto [text, statement] = Conditional(random, partition, row);
    texts.push_back(std::move(text));
    generated.op.statements.push_back(std::move(statement));
  }
  generated.text = batch ? absl::StrCat("BEGIN BATCH ", absl::StrJoin(texts, "; "), "; APPLY BATCH") : texts[0];
  return generated;
}

GeneratedOp StatementGenerator::SerialRead(Random& random, int64_t partition) const {
  GeneratedOp generated;
  generated.op.kind = model::LwtOp::Kind::kSerialRead;
  generated.op.partition = absl::StrCat(partition);
  std::tie(generated.text, generated.op.slice) = RandomSelect(random, partition, false);
  return generated;
}

std::pair<std::string, model::Slice> StatementGenerator::RandomSelect(Random& random, int64_t partition,
                                                                     bool allow_in) const {
  model::Slice slice;
  std::string text = absl::StrCat("SELECT * FROM ", schema_.QualifiedTable(), schema_.WherePartition(partition));
  const model::Key row = RowKey(static_cast<uint32_t>(random.Below(spec_.rows_per_partition())));
  const std::string& first = schema_.clustering[0].name;
  switch (random.Below(allow_in ? 5 : 4)) {
    case 0:  // one row
      text = absl::StrCat("SELECT * FROM ", schema_.QualifiedTable(), WhereRow(partition, row));
      slice.low = slice.high = row;
      break;
    case 4: {  // IN on the first clustering column: rows, or prefixes
      std::vector<model::Value> values;
      for (int i = 0; i < 3; i++) {
        values.push_back(RowKey(static_cast<uint32_t>(random.Below(spec_.rows_per_partition())))[0]);
      }
      std::vector<std::string> literals;
      for (const model::Value& value : values) literals.push_back(CqlLiteral(value));
      absl::StrAppend(&text, " AND ", first, " IN (", absl::StrJoin(literals, ", "), ")");
      slice.first_in = std::move(values);
      break;
    }
    case 1:  // a range of the first clustering column, bounds by value
      absl::StrAppend(&text, FirstColumnRange(random, row, /*low_inclusive=*/true, /*high_inclusive=*/false, slice));
      break;
    case 2:  // a prefix
      absl::StrAppend(&text, " AND ", first, " = ", CqlLiteral(row[0]));
      slice.low = slice.high = model::Key{row[0]};
      break;
    default:  // the whole partition
      break;
  }
  if (random.Chance(0.3)) {
    slice.reversed = true;
    absl::StrAppend(&text, " ORDER BY ", first, schema_.descending[0] ? " ASC" : " DESC");
  }
  if (random.Chance(0.3)) {
    slice.limit = 1 + random.Below(4);
    absl::StrAppend(&text, " LIMIT ", slice.limit);
  }
  return {std::move(text), std::move(slice)};
}

std::string StatementGenerator::FirstColumnRange(Random& random, const model::Key& row, bool low_inclusive,
                                                 bool high_inclusive, model::Slice& slice) const {
  const std::string& first = schema_.clustering[0].name;
  const model::Key other = RowKey(static_cast<uint32_t>(random.Below(spec_.rows_per_partition())));
  const model::Value low = std::min(row[0], other[0]), high = std::max(row[0], other[0]);
  // In clustering order a DESC column runs from high to low.
  const bool descending = schema_.descending[0];
  slice.low = model::Key{descending ? high : low};
  slice.low_inclusive = descending ? high_inclusive : low_inclusive;
  slice.high = model::Key{descending ? low : high};
  slice.high_inclusive = descending ? low_inclusive : high_inclusive;
  return absl::StrCat(" AND ", first, low_inclusive ? " >= " : " > ", CqlLiteral(low), " AND ", first,
                      high_inclusive ? " <= " : " < ", CqlLiteral(high));
}

std::string StatementGenerator::SomeColumns(Random& random) const {
  std::vector<std::string> names;
  for (const GeneratedSchema::Column& column : schema_.regular) {
    if (!random.Chance(0.5)) continue;
    names.push_back(column.name);
    // Half with when it was written: the checker wants the version read
    // to carry that timestamp.
    if (random.Chance(0.5)) names.push_back(absl::StrCat("WRITETIME(", column.name, ")"));
  }
  for (const GeneratedSchema::Column& column : schema_.sets) {
    if (random.Chance(0.5)) names.push_back(column.name);  // no WRITETIME of a non-frozen set
  }
  // The clustering columns somewhere among them: answers name their columns.
  for (const GeneratedSchema::Column& column : schema_.clustering) {
    names.insert(names.begin() + static_cast<std::ptrdiff_t>(random.Below(names.size() + 1)), column.name);
  }
  return absl::StrJoin(names, ", ");
}

GeneratedPlainOp StatementGenerator::RandomScan(Random& random) const {
  GeneratedPlainOp generated;
  generated.scan = true;
  generated.op.kind = model::PlainOp::Kind::kRead;
  generated.text = absl::StrCat("SELECT * FROM ", schema_.QualifiedTable());
  if (random.Chance(0.5)) {
    // Mostly at a partition's own token, where > and >= (< and <=) part.
    const uint64_t partitions = spec_.partitions() + spec_.plain_partitions();
    const auto bound = [&]() -> int64_t {
      return random.Chance(0.75) ? schema_.PartitionToken(static_cast<int64_t>(random.Below(partitions)))
                                 : static_cast<int64_t>(random.Next());
    };
    TokenBounds& bounds = generated.tokens.emplace();
    bounds.low = bound();
    bounds.high = bound();
    if (bounds.low > bounds.high) std::swap(bounds.low, bounds.high);
    bounds.low_inclusive = random.Chance(0.5);
    bounds.high_inclusive = random.Chance(0.5);
    const std::string token = absl::StrCat("token(", schema_.PartitionColumns(), ")");
    absl::StrAppend(&generated.text, " WHERE ", token, bounds.low_inclusive ? " >= " : " > ", bounds.low, " AND ", token,
                    bounds.high_inclusive ? " <= " : " < ", bounds.high);
  }
  if (spec_.page_size() > 0 && random.Chance(0.8)) generated.page_size = 1 + random.Below(4 * spec_.page_size());
  return generated;
}

GeneratedPlainOp StatementGenerator::RandomPartitionsIn(Random& random) const {
  GeneratedPlainOp generated;
  generated.scan = true;
  generated.op.kind = model::PlainOp::Kind::kRead;
  std::vector<std::string> literals;
  const uint64_t count = 2 + random.Below(2);
  for (uint64_t i = 0; i < count; i++) {
    generated.partitions_in.push_back(static_cast<int64_t>(spec_.partitions() + random.Below(spec_.plain_partitions())));
    literals.push_back(schema_.PartitionLiterals(generated.partitions_in.back())[0]);
  }
  generated.text = absl::StrCat("SELECT * FROM ", schema_.QualifiedTable(), " WHERE ", schema_.partition[0].name,
                                " IN (", absl::StrJoin(literals, ", "), ")");
  if (spec_.page_size() > 0 && random.Chance(0.5)) generated.page_size = 1 + random.Below(2 * spec_.page_size());
  return generated;
}

GeneratedPlainOp StatementGenerator::NextPlain(Random& random, uint64_t& write_ids, int64_t timestamp_us) const {
  CHARYBDIS_ASSERT(spec_.plain_partitions() > 0);
  const int64_t partition = static_cast<int64_t>(spec_.partitions() + random.Below(spec_.plain_partitions()));
  static constexpr ConsistencyLevel kLevels[] = {CL_ONE, CL_QUORUM, CL_QUORUM, CL_ALL};
  GeneratedPlainOp generated;
  generated.level = kLevels[random.Below(std::size(kLevels))];
  model::PlainOp& op = generated.op;
  op.partition = absl::StrCat(partition);
  if (random.Chance(0.5)) {
    op.kind = model::PlainOp::Kind::kRead;
    if (spec_.scan_fraction() > 0 && random.Chance(spec_.scan_fraction())) {
      // A composite key takes no IN here: pk2 would need one of its own.
      const bool in = random.Chance(0.25) && schema_.partition.size() == 1;
      GeneratedPlainOp scan = in ? RandomPartitionsIn(random) : RandomScan(random);
      scan.level = generated.level;
      return scan;
    }
    if (random.Chance(0.1)) {
      // The whole partition, counted; a page size does not cut the count.
      generated.count = true;
      generated.text = absl::StrCat("SELECT COUNT(*) FROM ", schema_.QualifiedTable(), schema_.WherePartition(partition));
      if (spec_.page_size() > 0 && random.Chance(0.5)) generated.page_size = 1 + random.Below(spec_.page_size());
      return generated;
    }
    std::tie(generated.text, op.slice) = RandomSelect(random, partition, true);
    if (random.Chance(0.25)) {
      // Named columns: the clustering ones (which name the row) and some
      // regular ones, perhaps none: a row returned with every one of them
      // null must be live by a column it did not select, or its marker.
      CHARYBDIS_ASSERT(generated.text.rfind("SELECT * ", 0) == 0);
      generated.text.replace(0, std::string_view("SELECT * ").size(), absl::StrCat("SELECT ", SomeColumns(random), " "));
    }
    if (spec_.page_size() > 0 && random.Chance(0.5)) generated.page_size = 1 + random.Below(spec_.page_size());
    return generated;
  }
  op = RandomPlainWrite(random, ++write_ids, timestamp_us);
  generated.text = op.text;
  if (random.Chance(0.8)) return generated;
  // Unlogged: each partition's writes apply as one, the partitions apart,
  // none of them certainly if the batch fails. A microsecond apart, so
  // that two writes of one cell do not tie.
  std::vector<std::string> statements{op.text};
  const uint64_t more = 1 + random.Below(2);
  for (uint64_t i = 1; i <= more; i++) {
    generated.batched.push_back(RandomPlainWrite(random, ++write_ids, timestamp_us - static_cast<int64_t>(i)));
    statements.push_back(generated.batched.back().text);
  }
  generated.text = absl::StrCat("BEGIN UNLOGGED BATCH ", absl::StrJoin(statements, "; "), "; APPLY BATCH");
  return generated;
}

model::PlainOp StatementGenerator::RandomPlainWrite(Random& random, uint64_t write_id, int64_t timestamp_us) const {
  const int64_t partition = static_cast<int64_t>(spec_.partitions() + random.Below(spec_.plain_partitions()));
  model::PlainOp op;
  op.kind = model::PlainOp::Kind::kWrite;
  op.partition = absl::StrCat(partition);
  op.timestamp_us = timestamp_us;
  const bool ttl = spec_.ttl_fraction() > 0 && random.Chance(spec_.ttl_fraction());
  const int64_t ttl_seconds = ttl ? random.Between(1, spec_.max_ttl_seconds()) : 0;
  std::tie(op.text, op.write) = PlainWrite(random, partition, write_id, timestamp_us, ttl_seconds);
  return op;
}

std::vector<model::Condition> StatementGenerator::RandomConditions(Random& random) const {
  using Op = model::Condition::Op;
  static constexpr Op kOps[] = {Op::kEq, Op::kNe, Op::kLt, Op::kLe, Op::kGt, Op::kGe};
  std::vector<model::Condition> conditions;
  const uint64_t count = 1 + random.Below(2);
  for (uint64_t i = 0; i < count; i++) {
    const GeneratedSchema::Column& column = schema_.regular[random.Below(schema_.regular.size())];
    // Mostly equality, as applications write them.
    const Op op = kOps[random.Chance(0.5) ? 0 : random.Below(std::size(kOps))];
    conditions.push_back(model::Condition{column.name, op, RandomValue(random, column.type)});
  }
  return conditions;
}

std::string StatementGenerator::ConditionText(const std::vector<model::Condition>& conditions) {
  static const std::map<model::Condition::Op, const char*> kText = {
      {model::Condition::Op::kEq, "="}, {model::Condition::Op::kNe, "!="}, {model::Condition::Op::kLt, "<"},
      {model::Condition::Op::kLe, "<="}, {model::Condition::Op::kGt, ">"}, {model::Condition::Op::kGe, ">="}};
  std::vector<std::string> parts;
  for (const model::Condition& condition : conditions) {
    parts.push_back(absl::StrCat(condition.column, " ", kText.at(condition.op), " ", CqlLiteral(condition.value)));
  }
  return " IF " + absl::StrJoin(parts, " AND ");
}

std::map<std::string, std::optional<model::Value>> StatementGenerator::RandomAssignments(Random& random) const {
  std::map<std::string, std::optional<model::Value>> assignments;
  while (assignments.empty()) {
    for (const GeneratedSchema::Column& column : schema_.regular) {
      if (random.Chance(0.5)) assignments[column.name] = RandomValue(random, column.type);
    }
  }
  return assignments;
}

std::pair<std::string, model::LwtStatement> StatementGenerator::Conditional(Random& random, int64_t partition,
                                                                            uint32_t row) const {
  const model::Key key = RowKey(row);
  const std::string table = schema_.QualifiedTable();
  model::LwtStatement statement;
  model::Write& write = statement.write;
  write.clustering = key;
  const bool ttl = spec_.ttl_fraction() > 0 && random.Chance(spec_.ttl_fraction());
  write.ttl_seconds = ttl ? random.Between(1, spec_.max_ttl_seconds()) : 0;
  const std::string using_ttl = ttl ? absl::StrCat(" USING TTL ", write.ttl_seconds) : "";
  auto condition = [&](model::RowCondition::Kind kind, std::vector<model::Condition> conditions = {}) {
    statement.condition = model::RowCondition{kind, key, std::move(conditions)};
  };
  switch (random.Below(6)) {
    case 0: {  // INSERT ... IF NOT EXISTS
      write.kind = model::Write::Kind::kInsert;
      write.columns = RandomAssignments(random);
      condition(model::RowCondition::Kind::kIfNotExists);
      return {InsertText(partition, write, absl::StrCat(" IF NOT EXISTS", using_ttl)), std::move(statement)};
    }
    case 1:    // UPDATE ... IF conditions
    case 2:    // UPDATE ... IF EXISTS
    case 3: {  // UPDATE ... SET column = null IF conditions
      const uint64_t form = random.Below(3);
      write.kind = model::Write::Kind::kUpdate;
      write.columns = RandomAssignments(random);
      if (form == 2) write.columns.begin()->second = std::nullopt;
      std::vector<std::string> sets;
      for (const auto& [column, value] : write.columns) {
        sets.push_back(absl::StrCat(column, " = ", value ? CqlLiteral(*value) : "null"));
      }
      std::string condition_text = " IF EXISTS";
      if (form == 1) {
        condition(model::RowCondition::Kind::kIfExists);
      } else {
        condition(model::RowCondition::Kind::kColumns, RandomConditions(random));
        condition_text = ConditionText(statement.condition->conditions);
      }
      return {absl::StrCat("UPDATE ", table, using_ttl, " SET ", absl::StrJoin(sets, ", "), WhereRow(partition, key),
                           condition_text),
              std::move(statement)};
    }
    case 4:  // DELETE ... IF EXISTS
      write.kind = model::Write::Kind::kDeleteRow;
      write.ttl_seconds = 0;
      condition(model::RowCondition::Kind::kIfExists);
      return {absl::StrCat("DELETE FROM ", table, WhereRow(partition, key), " IF EXISTS"), std::move(statement)};
    default: {  // DELETE column ... IF conditions
      const GeneratedSchema::Column& column = schema_.regular[random.Below(schema_.regular.size())];
      write.kind = model::Write::Kind::kDeleteColumns;
      write.ttl_seconds = 0;
      write.columns[column.name] = std::nullopt;
      condition(model::RowCondition::Kind::kColumns, RandomConditions(random));
      return {absl::StrCat("DELETE ", column.name, " FROM ", table, WhereRow(partition, key),
                           ConditionText(statement.condition->conditions)),
              std::move(statement)};
    }
  }
}

std::string StatementGenerator::InsertText(int64_t partition, const model::Write& write,
                                           const std::string& suffix) const {
  CHARYBDIS_ASSERT(write.kind == model::Write::Kind::kInsert);
  std::vector<std::string> names, values = schema_.PartitionLiterals(partition);
  for (const GeneratedSchema::Column& column : schema_.partition) names.push_back(column.name);
  for (size_t i = 0; i < write.clustering.size(); i++) {
    names.push_back(schema_.clustering[i].name);
    values.push_back(CqlLiteral(write.clustering[i]));
  }
  for (const auto& [column, value] : write.columns) {
    names.push_back(column);
    values.push_back(value ? CqlLiteral(*value) : "null");
  }
  return absl::StrCat("INSERT INTO ", schema_.QualifiedTable(), " (", absl::StrJoin(names, ", "), ") VALUES (",
                      absl::StrJoin(values, ", "), ")", suffix);
}

std::pair<std::string, model::Write> StatementGenerator::PlainRangeDelete(Random& random, int64_t partition,
                                                                         const model::Key& row,
                                                                         const std::string& using_time) const {
  model::Write write;
  write.kind = model::Write::Kind::kDeleteRange;
  std::string text = absl::StrCat("DELETE FROM ", schema_.QualifiedTable(), using_time, schema_.WherePartition(partition));
  const std::string& first = schema_.clustering[0].name;
  switch (random.Below(4)) {
    case 0:  // the whole partition
      break;
    case 1:  // a prefix (with one clustering column, a row: a row tombstone)
      absl::StrAppend(&text, " AND ", first, " = ", CqlLiteral(row[0]));
      write.range.low = write.range.high = model::Key{row[0]};
      break;
    default:  // a range of the first column, each bound inclusive or not
      absl::StrAppend(&text, FirstColumnRange(random, row, random.Chance(0.5), random.Chance(0.5), write.range));
      break;
  }
  return {std::move(text), std::move(write)};
}

model::Value StatementGenerator::PlainValue(Type type, uint64_t write_id) {
  switch (type) {
    case Type::kInt: return static_cast<int64_t>(write_id % (1u << 31));
    case Type::kBigint: return static_cast<int64_t>(write_id) + 1'000'000'000'000;
    case Type::kText: return absl::StrCat("w", write_id);
  }
  CHARYBDIS_ASSERT(false);
  return int64_t{0};
}

std::pair<std::string, model::Write> StatementGenerator::PlainWrite(Random& random, int64_t partition, uint64_t write_id,
                                                                    int64_t timestamp_us, int64_t ttl_seconds) const {
  const model::Key key = RowKey(static_cast<uint32_t>(random.Below(spec_.rows_per_partition())));
  const std::string table = schema_.QualifiedTable();
  model::Write write;
  write.clustering = key;
  const std::string using_time = absl::StrCat(" USING TIMESTAMP ", timestamp_us);
  // Deletes take no TTL.
  const std::string using_ttl = absl::StrCat(using_time, ttl_seconds > 0 ? absl::StrCat(" AND TTL ", ttl_seconds) : "");
  if (!schema_.sets.empty() && random.Chance(spec_.set_write_fraction())) {
    return PlainSetWrite(random, partition, key, using_time, using_ttl, ttl_seconds);
  }
  const uint64_t form = random.Below(5);
  if (form == 3 && random.Chance(0.4)) return PlainRangeDelete(random, partition, key, using_time);
  if (form == 3) {
    write.kind = model::Write::Kind::kDeleteRow;
    return {absl::StrCat("DELETE FROM ", table, using_time, WhereRow(partition, key)), std::move(write)};
  }
  if (form == 4) {
    const GeneratedSchema::Column& column = schema_.regular[random.Below(schema_.regular.size())];
    write.kind = model::Write::Kind::kDeleteColumns;
    write.columns[column.name] = std::nullopt;
    return {absl::StrCat("DELETE ", column.name, " FROM ", table, using_time, WhereRow(partition, key)),
            std::move(write)};
  }
  write.ttl_seconds = ttl_seconds;
  for (const GeneratedSchema::Column& column : schema_.regular) {
    if (random.Chance(0.6)) write.columns[column.name] = PlainValue(column.type, write_id);
  }
  if (write.columns.empty()) write.columns[schema_.regular[0].name] = PlainValue(schema_.regular[0].type, write_id);
  if (form == 0) {
    write.kind = model::Write::Kind::kInsert;
    std::string text = InsertText(partition, write, using_ttl);
    return {std::move(text), std::move(write)};
  }
  write.kind = model::Write::Kind::kUpdate;
  if (form == 2) write.columns.begin()->second = std::nullopt;  // SET c = null: a tombstone
  std::vector<std::string> sets;
  for (const auto& [column, value] : write.columns) {
    sets.push_back(absl::StrCat(column, " = ", value ? CqlLiteral(*value) : "null"));
  }
  return {absl::StrCat("UPDATE ", table, using_ttl, " SET ", absl::StrJoin(sets, ", "), WhereRow(partition, key)),
          std::move(write)};
}

std::pair<std::string, model::Write> StatementGenerator::PlainSetWrite(Random& random, int64_t partition,
                                                                       const model::Key& row,
                                                                       const std::string& using_time,
                                                                       const std::string& using_ttl,
                                                                       int64_t ttl_seconds) const {
  const std::string& set = schema_.sets[random.Below(schema_.sets.size())].name;
  model::Write write;
  write.clustering = row;
  // A few elements of few values: clients add and remove the same ones.
  std::vector<std::string> literals;
  std::vector<model::Value> elements;
  const uint64_t count = random.Below(4);
  for (uint64_t i = 0; i < count; i++) {
    elements.push_back(static_cast<int64_t>(random.Below(6)));
    literals.push_back(CqlLiteral(elements.back()));
  }
  const std::string literal = absl::StrCat("{", absl::StrJoin(literals, ", "), "}");
  model::SetWrite& change = write.sets[set];
  const std::string update = absl::StrCat("UPDATE ", schema_.QualifiedTable(), using_ttl, " SET ", set, " = ");
  switch (random.Below(6)) {
    case 0:
    case 1:  // additions, the most common change
      write.kind = model::Write::Kind::kUpdate;
      write.ttl_seconds = ttl_seconds;
      change.added = elements;
      return {absl::StrCat(update, set, " + ", literal, WhereRow(partition, row)), std::move(write)};
    case 2:  // removals: tombstones take no TTL
      write.kind = model::Write::Kind::kUpdate;
      change.removed = elements;
      return {absl::StrCat("UPDATE ", schema_.QualifiedTable(), using_time, " SET ", set, " = ", set, " - ", literal,
                           WhereRow(partition, row)),
              std::move(write)};
    case 3:  // the set whole ({} deletes it, a microsecond before the write)
      write.kind = model::Write::Kind::kUpdate;
      write.ttl_seconds = ttl_seconds;
      change.whole = model::SetWrite::Whole::kReplace;
      change.added = elements;
      return {absl::StrCat(update, literal, WhereRow(partition, row)), std::move(write)};
    case 4: {  // an INSERT of the set: the row marker too
      write.kind = model::Write::Kind::kInsert;
      write.ttl_seconds = ttl_seconds;
      change.whole = model::SetWrite::Whole::kReplace;
      change.added = elements;
      std::string text = InsertText(partition, write, using_ttl);
      text.replace(text.find(") VALUES ("), 0, absl::StrCat(", ", set));
      text.replace(text.rfind(")"), 0, absl::StrCat(", ", literal));
      return {std::move(text), std::move(write)};
    }
    default:  // deleted, at the write's time
      write.kind = model::Write::Kind::kDeleteColumns;
      change.whole = model::SetWrite::Whole::kDelete;
      return {random.Chance(0.5) ? absl::StrCat("DELETE ", set, " FROM ", schema_.QualifiedTable(), using_time,
                                                WhereRow(partition, row))
                                 : absl::StrCat("UPDATE ", schema_.QualifiedTable(), using_time, " SET ", set,
                                                " = null", WhereRow(partition, row)),
              std::move(write)};
  }
}

}  // namespace charybdis::sim
