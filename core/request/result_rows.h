#pragma once

#include <functional>
#include <set>
#include <string>

#include "core/data/partition.h"
#include "google/protobuf/repeated_field.h"
#include "proto/client.pb.h"

namespace charybdis {

// The columns a request reads rows with (ReadOp.column and its kin):
// cells of other columns are left out, and a row with no live cell among
// them does not exist. So the cells of a dropped CQL column neither show
// nor keep a row alive. Empty: every column.
class ReadColumns {
 public:
  ReadColumns() = default;
  explicit ReadColumns(const google::protobuf::RepeatedPtrField<std::string>& columns);

  // Whether a cell is read: its column's (a collection's element belongs
  // to its column, core/data/cell.h).
  bool Includes(const std::string& cell_name) const {
    return columns_.empty() || columns_.count(ColumnOfCell(cell_name)) > 0;
  }
  // Whether `row` has a live cell at `now` among the columns.
  bool Exists(const Row& row, Timestamp now) const;

 private:
  std::set<std::string, std::less<>> columns_;  // found by a cell name's view, every cell of every read
};

// Fills an answer with what a client sees of `partition` at `now`: its
// live rows (those in `only`, if given) and their cells alive at `now`,
// both as `columns` allows, and the newest timestamp of anything in it,
// tombstones included.
void AddVisibleRows(const Partition& partition, Timestamp now, const std::set<std::string>* only,
                    const ReadColumns& columns, ClientResponse& response);

}  // namespace charybdis
