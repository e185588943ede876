#include "core/cql/schema.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/data/big_endian.h"
#include "core/data/murmur3.h"

namespace charybdis::cql {
namespace {

constexpr char kEscape = 0x00;
constexpr char kEscapedZero = static_cast<char>(0xFF);
constexpr char kTerminator = 0x01;

void AppendComponent(std::string& out, std::string_view comparable, bool descending) {
  std::string component;
  for (char c : comparable) {
    component.push_back(c);
    if (c == kEscape) component.push_back(kEscapedZero);
  }
  component.push_back(kEscape);
  component.push_back(kTerminator);
  if (descending) {
    for (char& c : component) c = static_cast<char>(~c);
  }
  CHARYBDIS_ASSERT(component.size() >= comparable.size() + 2);  // escaped, then terminated
  out.append(component);
}

// One component from the front of `key`, which it consumes.
std::string TakeComponent(std::string_view& key, bool descending) {
  std::string comparable;
  const auto at = [&](size_t i) { return static_cast<char>(descending ? ~key[i] : key[i]); };
  size_t i = 0;
  while (i + 1 < key.size() && !(at(i) == kEscape && at(i + 1) == kTerminator)) {
    comparable.push_back(at(i));
    i += at(i) == kEscape ? 2 : 1;
  }
  CHARYBDIS_ASSERT(i <= key.size());  // the cursor never passes the end
  CHARYBDIS_ASSERT(comparable.size() <= i);
  key.remove_prefix(std::min(key.size(), i + 2));
  return comparable;
}

}  // namespace

const Column* Table::Find(std::string_view column) const {
  const int index = IndexOf(column);
  CHARYBDIS_ASSERT(index < static_cast<int>(columns.size()));
  return index < 0 ? nullptr : &columns[index];
}

int Table::IndexOf(std::string_view column) const {
  for (size_t i = 0; i < columns.size(); i++) {
    if (columns[i].name == column) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> Table::StorageColumns() const {
  std::vector<std::string> storage{kRowMarker};
  for (const Column& column : columns) {
    if (column.kind != Column::Kind::kRegular) continue;
    CHARYBDIS_ASSERT(!column.storage.empty());
    storage.push_back(column.storage);
  }
  return storage;
}

absl::Status Schema::Apply(const CreateKeyspace& create, uint64_t sequence) {
  if (keyspaces_.count(create.name)) {
    if (create.if_not_exists) return absl::OkStatus();
    return absl::AlreadyExistsError(absl::StrCat("keyspace ", create.name, " already exists"));
  }
  Keyspace keyspace{create.name, create.replication, sequence};
  keyspaces_[create.name] = std::move(keyspace);
  return absl::OkStatus();
}

absl::Status Schema::Apply(const AlterKeyspace& alter) {
  auto keyspace = keyspaces_.find(alter.name);
  if (keyspace == keyspaces_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("keyspace ", alter.name, " does not exist"));
  }
  CHARYBDIS_ASSERT(alter.replication.count("class") == 1);  // checked
  keyspace->second.replication = alter.replication;
  return absl::OkStatus();
}

absl::Status Schema::ApplySystem(const CreateKeyspace& create) {
  keyspaces_[create.name] = Keyspace{create.name, create.replication};
  return absl::OkStatus();
}

static absl::Status CheckPrimaryKey(const CreateTable& create, const std::map<std::string, Type>& types,
                                    bool allow_unordered_keys) {
  if (create.partition_key.empty()) return absl::InvalidArgumentError("a table needs a PRIMARY KEY");
  std::set<std::string> key;
  for (const auto& list : {create.partition_key, create.clustering}) {
    for (const std::string& name : list) {
      auto type = types.find(name);
      if (type == types.end()) return absl::InvalidArgumentError(absl::StrCat("unknown key column ", name));
      if (!key.insert(name).second) return absl::InvalidArgumentError(absl::StrCat("column ", name, " is twice in the key"));
      if (!IsOrdered(type->second) && !allow_unordered_keys) return absl::InvalidArgumentError(absl::StrCat("a ", TypeName(type->second), " column cannot be in the key"));
    }
  }
  for (const auto& [column, descending] : create.descending) {
    if (std::find(create.clustering.begin(), create.clustering.end(), column) == create.clustering.end()) {
      return absl::InvalidArgumentError(absl::StrCat("CLUSTERING ORDER BY names ", column, ", not a clustering column"));
    }
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<Type> ColumnType(const ColumnDefinition& column) {
  std::optional<Type> type = ParseType(column.type);
  if (!type) {
    return absl::InvalidArgumentError(absl::StrCat("unknown or unsupported type ", column.type));
  }
  if (column.name.empty()) return absl::InvalidArgumentError("a column needs a name");
  // A 0 byte ends a column's name in its elements' cells (core/data/cell.h).
  if (column.name.find('\0') != std::string::npos) return absl::InvalidArgumentError("a column's name cannot hold a 0 byte");
  return *type;
}

// Regular columns sorted by name, as SELECT * shows them (Cassandra's order).
void SortRegularColumns(Table& table) {
  CHARYBDIS_ASSERT(static_cast<size_t>(table.partition_key_count + table.clustering_count) <= table.columns.size());
  const auto first_regular = table.columns.begin() + table.partition_key_count + table.clustering_count;
  std::sort(first_regular, table.columns.end(), [](const Column& a, const Column& b) { return a.name < b.name; });
  int position = 0;
  for (auto it = first_regular; it != table.columns.end(); ++it) it->position = position++;
}

}  // namespace

// WITH gc_grace_seconds = N AND tombstone_gc = {'mode': M,
// 'propagation_delay_in_seconds': D}, as ScyllaDB takes them: `gc` with
// what they set.
static absl::StatusOr<TombstoneGc> TombstoneGcOf(const TableGcOptions& options, TombstoneGc gc) {
  const auto seconds = [](const std::string& text, const char* what) -> absl::StatusOr<int64_t> {
    int64_t value = 0;
    // At most what system_schema.tables' int column shows.
    if (!absl::SimpleAtoi(text, &value) || value < 0 || value > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " must be a number of seconds, not '", text, "'"));
    }
    return value;
  };
  if (options.gc_grace_seconds) {
    absl::StatusOr<int64_t> grace = seconds(*options.gc_grace_seconds, "gc_grace_seconds");
    if (!grace.ok()) return grace.status();
    gc.gc_grace_seconds = *grace;
  }
  for (const auto& [option, value] : options.tombstone_gc) {
    if (option == "mode") {
      absl::StatusOr<TombstoneGc::Mode> mode = ParseTombstoneGcMode(value);
      if (!mode.ok()) return mode.status();
      gc.mode = *mode;
    } else if (option == "propagation_delay_in_seconds") {
      absl::StatusOr<int64_t> delay = seconds(value, "propagation_delay_in_seconds");
      if (!delay.ok()) return delay.status();
      gc.propagation_delay_seconds = *delay;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("tombstone_gc has no option '", option,
                                                     "': it takes mode and propagation_delay_in_seconds"));
    }
  }
  return gc;
}

absl::Status Schema::Apply(const CreateTable& create, uint64_t sequence, bool allow_unordered_keys) {
  const auto key = std::pair{create.table.keyspace, create.table.table};
  if (!keyspaces_.count(key.first)) return absl::InvalidArgumentError(absl::StrCat("keyspace ", key.first, " does not exist"));
  if (tables_.count(key)) {
    if (create.if_not_exists) return absl::OkStatus();
    return absl::AlreadyExistsError(absl::StrCat("table ", key.first, ".", key.second, " already exists"));
  }
  std::map<std::string, Type> types;
  for (const ColumnDefinition& column : create.columns) {
    absl::StatusOr<Type> type = ColumnType(column);
    if (!type.ok()) return type.status();
    if (!types.emplace(column.name, *type).second) return absl::InvalidArgumentError(absl::StrCat("column ", column.name, " is defined twice"));
  }
  if (absl::Status checked = CheckPrimaryKey(create, types, allow_unordered_keys); !checked.ok()) return checked;
  absl::StatusOr<TombstoneGc> gc = TombstoneGcOf(create.gc, TombstoneGc());
  if (!gc.ok()) return gc.status();
  Table table;
  table.gc = *gc;
  table.keyspace = key.first;
  table.name = key.second;
  table.storage = absl::StrCat(key.first, ".", key.second);
  if (sequence != 0) absl::StrAppend(&table.storage, "@", sequence);
  table.id = NameUuid(table.storage);
  const auto add = [&](const std::string& name, Column::Kind kind, int position) {
    const auto it = create.descending.find(name);
    table.columns.push_back({name, types.at(name), kind, position, it != create.descending.end() && it->second, name});
  };
  for (const std::string& name : create.partition_key) add(name, Column::Kind::kPartitionKey, table.partition_key_count++);
  for (const std::string& name : create.clustering) add(name, Column::Kind::kClustering, table.clustering_count++);
  for (const ColumnDefinition& column : create.columns) {
    if (table.Find(column.name) == nullptr) add(column.name, Column::Kind::kRegular, 0);
  }
  // Every defined column once: the key's (checked above), then the rest.
  CHARYBDIS_ASSERT(table.columns.size() == types.size());
  CHARYBDIS_ASSERT(table.partition_key_count >= 1);
  CHARYBDIS_ASSERT(table.id.size() == 16);
  SortRegularColumns(table);
  tables_[key] = std::move(table);
  return absl::OkStatus();
}

absl::Status Schema::Apply(const DropKeyspace& drop) {
  if (!keyspaces_.count(drop.name)) {
    if (drop.if_exists) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("keyspace ", drop.name, " does not exist"));
  }
  keyspaces_.erase(drop.name);
  for (auto it = tables_.begin(); it != tables_.end();) {
    it = it->first.first == drop.name ? tables_.erase(it) : std::next(it);
  }
  return absl::OkStatus();
}

absl::Status Schema::Apply(const DropTable& drop) {
  if (tables_.erase({drop.table.keyspace, drop.table.table}) == 0 && !drop.if_exists) {
    return absl::InvalidArgumentError(absl::StrCat("table ", drop.table.keyspace, ".", drop.table.table, " does not exist"));
  }
  return absl::OkStatus();
}

absl::Status Schema::Apply(const AlterTable& alter, uint64_t sequence) {
  auto found = tables_.find({alter.table.keyspace, alter.table.table});
  if (found == tables_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("table ", alter.table.keyspace, ".", alter.table.table, " does not exist"));
  }
  Table table = found->second;
  absl::StatusOr<TombstoneGc> gc = TombstoneGcOf(alter.gc, table.gc);
  if (!gc.ok()) return gc.status();
  table.gc = *gc;
  for (const ColumnDefinition& column : alter.add) {
    absl::StatusOr<Type> type = ColumnType(column);
    if (!type.ok()) return type.status();
    if (table.Find(column.name)) return absl::InvalidArgumentError(absl::StrCat("column ", column.name, " already exists"));
    // A name dropped before is stored afresh: its old cells stay unread.
    // The bootstrap schema has no entry to name the new storage after.
    if (table.dropped.count(column.name) && sequence == 0) {
      return absl::InvalidArgumentError(absl::StrCat("column ", column.name, " was dropped; only a schema change (ALTER TABLE through CQL) adds it again"));
    }
    std::string storage = table.dropped.count(column.name) ? absl::StrCat(column.name, "@", sequence) : column.name;
    table.columns.push_back({column.name, *type, Column::Kind::kRegular, 0, false, std::move(storage)});
  }
  for (const std::string& name : alter.drop) {
    const int index = table.IndexOf(name);
    if (index < 0) return absl::InvalidArgumentError(absl::StrCat("column ", name, " does not exist"));
    CHARYBDIS_ASSERT(static_cast<size_t>(index) < table.columns.size());
    if (table.columns[index].kind != Column::Kind::kRegular) return absl::InvalidArgumentError(absl::StrCat("cannot drop primary key column ", name));
    table.columns.erase(table.columns.begin() + index);
    table.dropped.insert(name);
  }
  SortRegularColumns(table);
  found->second = std::move(table);
  return absl::OkStatus();
}

const Keyspace* Schema::FindKeyspace(std::string_view name) const {
  auto it = keyspaces_.find(std::string(name));
  return it == keyspaces_.end() ? nullptr : &it->second;
}

const Table* Schema::FindTable(std::string_view keyspace, std::string_view table) const {
  auto it = tables_.find({std::string(keyspace), std::string(table)});
  return it == tables_.end() ? nullptr : &it->second;
}

std::string Schema::Version() const {
  std::string digest;
  for (const auto& [name, keyspace] : keyspaces_) {
    absl::StrAppend(&digest, "k:", name, ";");
    for (const auto& [option, value] : keyspace.replication) absl::StrAppend(&digest, option, "=", value, ";");
  }
  for (const auto& [key, table] : tables_) {
    absl::StrAppend(&digest, "t:", key.first, ".", key.second, "@", table.storage, ";");
    for (const std::string& dropped : table.dropped) absl::StrAppend(&digest, "-", dropped, ";");
    // The default adds nothing: versions of tables without options stay.
    if (!(table.gc == TombstoneGc())) {
      absl::StrAppend(&digest, "gc:", TombstoneGcModeName(table.gc.mode), ",", table.gc.gc_grace_seconds, ",",
                      table.gc.propagation_delay_seconds, ";");
    }
    for (const Column& column : table.columns) {
      absl::StrAppend(&digest, column.name, ":", TypeName(column.type), ":", static_cast<int>(column.kind), column.descending,
                      ":", column.storage, ";");
    }
  }
  return NameUuid(digest);
}

std::string EncodePartitionKey(const Table& table, const std::vector<std::string>& values) {
  if (table.partition_key_count == 1) return values[0];
  std::string key;
  for (const std::string& value : values) {
    AppendBigEndian(key, value.size(), 2);
    key.append(value).push_back(0);
  }
  return key;
}

std::vector<std::string> DecodePartitionKey(const Table& table, std::string_view key) {
  if (table.partition_key_count == 1) return {std::string(key)};
  std::vector<std::string> values;
  while (key.size() >= 2) {
    const size_t length = ReadBigEndian(key, 2);
    values.emplace_back(key.substr(2, length));
    key.remove_prefix(std::min(key.size(), 3 + length));
  }
  return values;
}

std::string EncodeClustering(const Table& table, const std::vector<std::string>& values) {
  CHARYBDIS_ASSERT(values.size() <= static_cast<size_t>(table.clustering_count));
  std::string key;
  for (size_t i = 0; i < values.size(); i++) {
    const Column& column = table.columns[table.partition_key_count + i];
    AppendComponent(key, ToComparable(column.type, values[i]), column.descending);
  }
  return key;
}

std::vector<std::string> DecodeClustering(const Table& table, std::string_view key) {
  std::vector<std::string> values;
  for (int i = 0; i < table.clustering_count && !key.empty(); i++) {
    const Column& column = table.columns[table.partition_key_count + i];
    values.push_back(FromComparable(column.type, TakeComponent(key, column.descending)));
  }
  CHARYBDIS_ASSERT(values.size() <= static_cast<size_t>(table.clustering_count));
  return values;
}

std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

std::string UuidText(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < bytes.size(); i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    text.push_back(kHex[(static_cast<unsigned char>(bytes[i]) >> 4) & 0xF]);
    text.push_back(kHex[static_cast<unsigned char>(bytes[i]) & 0xF]);
  }
  return text;
}

std::string NameUuid(std::string_view name) {
  const Hash128 hash = CassandraMurmur3(name);
  std::string bytes;
  AppendBigEndian(bytes, hash.high, 8);
  AppendBigEndian(bytes, hash.low, 8);
  CHARYBDIS_ASSERT(bytes.size() == 16);
  // A name-based UUID: version 3's nibble, the IETF variant.
  bytes[6] = static_cast<char>((bytes[6] & 0x0F) | 0x30);
  bytes[8] = static_cast<char>((bytes[8] & 0x3F) | 0x80);
  return bytes;
}

bool IsScan(const Table& table, const Select& select) {
  for (const Relation& relation : select.where) {
    const Column* column = table.Find(relation.column);
    if (column != nullptr && column->kind == Column::Kind::kPartitionKey) return false;
  }
  return true;
}

bool IsRangeDelete(const Table& table, const Delete& del) {
  for (int i = 0; i < table.clustering_count; i++) {
    const Column& column = table.columns[table.partition_key_count + i];
    const auto restricts = [&](const Relation& relation) { return relation.column == column.name; };
    const auto equal = [&](const Relation& relation) { return restricts(relation) && relation.op == Operator::kEq; };
    if (std::count_if(del.where.begin(), del.where.end(), restricts) != 1 ||
        std::count_if(del.where.begin(), del.where.end(), equal) != 1) {
      return true;
    }
  }
  return false;
}

}  // namespace charybdis::cql
