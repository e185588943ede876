#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "proto/scenario.pb.h"
#include "sim/model/lwt_check.h"
#include "sim/model/plain_check.h"

namespace charybdis::sim {

// What the CQL workload (sim/cql_workload.h) sends: a table with a random
// schema, and random conditional statements, conditional batches and
// serial reads on it, each with its meaning to the reference model
// (sim/model). Pure: text in, model out, no simulation.

struct GeneratedSchema {
  enum class Type { kInt, kBigint, kText };
  struct Column {
    std::string name;
    Type type = Type::kInt;
  };
  std::string keyspace;
  std::string table;
  // One column (pk), or two (pk, pk2: a composite key); int, bigint or
  // text.
  std::vector<Column> partition{{"pk", Type::kInt}};
  std::vector<Column> clustering;  // one or two, int, bigint or text
  std::vector<bool> descending;    // by clustering column
  std::vector<Column> regular;
  // Non-frozen set<int> columns (ints only), written by plain writes.
  std::vector<Column> sets;

  std::string QualifiedTable() const { return keyspace + "." + table; }
  // The partition key's columns, "pk" or "pk, pk2".
  std::string PartitionColumns() const;
  // Partition `index` (the workload's name for it) as CQL literals, one
  // per key column. Column i's value is of index + 1000 i: an int the
  // number itself, a bigint past 2^40 (so a key read as four bytes would be
  // another), a text 'p' and the number.
  std::vector<std::string> PartitionLiterals(int64_t index) const;
  // " WHERE pk = ... [AND pk2 = ...]".
  std::string WherePartition(int64_t index) const;
  // Its Murmur3 token: of its key's bytes as the protocol sends them (a
  // composite's: each column's length, bytes and a zero), where a scan
  // meets it.
  int64_t PartitionToken(int64_t index) const;
  // The index of a partition key a read returned (its columns' values, in
  // order), if it names one.
  std::optional<int64_t> PartitionIndexOf(const std::vector<model::Value>& key) const;
  // CREATE KEYSPACE (with `replication`, a CQL map) and CREATE TABLE.
  std::vector<std::string> Ddl(const std::string& replication) const;
};

// `with_set`: with a set<int> column `s` too (CqlWorkload.set_write_fraction).
GeneratedSchema RandomSchema(const std::string& keyspace, Random& random, bool with_set = false);

// One operation: its CQL, and the model operation the answer completes
// (kind, partition, statements or slice).
struct GeneratedOp {
  std::string text;
  model::LwtOp op;
};

// A scan's token() bounds: token(pk) > low (>= when inclusive), and
// token(pk) < high (<=).
struct TokenBounds {
  int64_t low = 0;
  bool low_inclusive = false;
  int64_t high = 0;
  bool high_inclusive = false;

  bool Hold(int64_t token) const {
    return (low_inclusive ? token >= low : token > low) && (high_inclusive ? token <= high : token < high);
  }
};

// One plain operation: a write that carries its own timestamp, or a read,
// at `level`.
struct GeneratedPlainOp {
  std::string text;
  model::PlainOp op;
  ConsistencyLevel level = CL_QUORUM;
  int32_t page_size = 0;  // a read's rows per page; 0: one page
  // A read of several partitions (op.partition is empty): the table's
  // (a scan), within `tokens` if any, or those of `partitions_in`.
  bool scan = false;
  // A scan within token() bounds, half of them: the partitions whose
  // tokens they hold, and no other.
  std::optional<TokenBounds> tokens;
  // pk IN (...), in this order, repeats included: each partition once,
  // in no order the checks rely on.
  std::vector<int64_t> partitions_in;
  // A SELECT COUNT(*) of the partition (op.count gets the answer).
  bool count = false;
  // A write sent in an unlogged BATCH: its other writes (op is the first),
  // each with its own values and timestamp, on any plain partition.
  std::vector<model::PlainOp> batched;
};

class StatementGenerator {
 public:
  StatementGenerator(GeneratedSchema schema, const scenario::CqlWorkload& spec);

  GeneratedOp Next(Random& random) const;
  // On the plain partitions, which follow the conditional ones: a read, or
  // a write whose values are its own (write ids drawn from `write_ids`,
  // which counts up) at `timestamp_us`, or an unlogged batch of two or
  // three of them at timestamps a microsecond apart.
  GeneratedPlainOp NextPlain(Random& random, uint64_t& write_ids, int64_t timestamp_us) const;

  const GeneratedSchema& schema() const { return schema_; }
  // The clustering key of row `index` of a partition.
  model::Key RowKey(uint32_t index) const;
  // " WHERE ..." naming one row.
  std::string WhereRow(int64_t partition, const model::Key& key) const;

 private:
  GeneratedOp SerialRead(Random& random, int64_t partition) const;
  // Columns for a SELECT: the clustering ones and some regular ones, in a
  // drawn order.
  std::string SomeColumns(Random& random) const;
  // A scan of the table, within token() bounds half the time.
  GeneratedPlainOp RandomScan(Random& random) const;
  // SELECT * ... WHERE pk IN (...) of two or three plain partitions, a
  // repeat among them at times.
  GeneratedPlainOp RandomPartitionsIn(Random& random) const;
  // A write of a random plain partition: its text and model form.
  model::PlainOp RandomPlainWrite(Random& random, uint64_t write_id, int64_t timestamp_us) const;
  // A SELECT of rows of the partition: its CQL and its slice. Serial reads
  // take no IN: each of its slices would be a read of its own.
  std::pair<std::string, model::Slice> RandomSelect(Random& random, int64_t partition, bool allow_in) const;
  // An INSERT, UPDATE (a column set to null among them) or DELETE of a
  // random row; the TTL goes to the inserts and updates only.
  std::pair<std::string, model::Write> PlainWrite(Random& random, int64_t partition, uint64_t write_id,
                                                  int64_t timestamp_us, int64_t ttl_seconds) const;
  // A value of `write_id`'s own, so that a read names the write it saw.
  static model::Value PlainValue(GeneratedSchema::Type type, uint64_t write_id);
  // " AND c1 >(=) low AND c1 <(=) high", bounds from `row` and another
  // row, and the slice it makes in the table's order.
  std::string FirstColumnRange(Random& random, const model::Key& row, bool low_inclusive, bool high_inclusive,
                               model::Slice& slice) const;
  // A DELETE of the partition, of a prefix of `row`, or of a range of the
  // first clustering column.
  std::pair<std::string, model::Write> PlainRangeDelete(Random& random, int64_t partition, const model::Key& row,
                                                        const std::string& using_time) const;
  // A write of set column `s` of `row`: elements added or removed, the set
  // written whole or deleted.
  std::pair<std::string, model::Write> PlainSetWrite(Random& random, int64_t partition, const model::Key& row,
                                                     const std::string& using_time, const std::string& using_ttl,
                                                     int64_t ttl_seconds) const;
  // One conditional statement on `row`: its CQL (no trailing semicolon)
  // and its model form.
  std::pair<std::string, model::LwtStatement> Conditional(Random& random, int64_t partition, uint32_t row) const;
  model::Value RandomValue(Random& random, GeneratedSchema::Type type) const;
  std::vector<model::Condition> RandomConditions(Random& random) const;
  static std::string ConditionText(const std::vector<model::Condition>& conditions);
  // One or more regular columns, each with a value.
  std::map<std::string, std::optional<model::Value>> RandomAssignments(Random& random) const;
  // INSERT of the write (kInsert) with `suffix` (IF NOT EXISTS, USING).
  std::string InsertText(int64_t partition, const model::Write& write, const std::string& suffix) const;

  GeneratedSchema schema_;
  scenario::CqlWorkload spec_;
};

}  // namespace charybdis::sim
