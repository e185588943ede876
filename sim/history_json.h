#pragma once

#include <ostream>

#include "sim/history.h"

namespace charybdis::sim {

// Writes the history one JSON object per line, Jepsen-style:
//   {"process": 3, "type": "invoke", "f": "write", "key": "k1", "value": "x",
//    "time": 1200000, "consistency": "QUORUM", "timestamp": 1200}
// Times are simulated nanoseconds; an ok read carries the value it read
// (null when absent).
void WriteHistoryJson(const History& history, std::ostream& out);

}  // namespace charybdis::sim
