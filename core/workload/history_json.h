#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "core/workload/history.h"

namespace charybdis {

// Writes the history one JSON object per line, Jepsen-style:
//   {"process": 3, "type": "invoke", "f": "write", "key": "k1", "value": "x",
//    "time": 1200000, "consistency": "QUORUM", "timestamp": 1200}
// Times are nanoseconds (simulated, or since a real run began); an ok read carries the value it read
// (null when absent).
void WriteHistoryJson(const History& history, std::ostream& out);

// Reads what WriteHistoryJson writes (from this simulator or from
// `charybdis-ctl run-scenario` against real nodes). Operations are taken to
// be on the table each names (`table` when it names none, as Jepsen's do),
// from clients in `datacenter`. Errors name the line.
absl::StatusOr<History> ReadHistoryJson(std::istream& in, const std::string& table,
                                        const std::string& datacenter);

}  // namespace charybdis
