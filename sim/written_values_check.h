#pragma once

#include "core/workload/history.h"
#include "sim/workload.h"

namespace charybdis::sim {

// No read invents a value: every value an ok read returns was written to
// that key by a write or cas that may have taken effect (ok, applied, or
// of unknown outcome; never one that definitely failed), and when that
// write was a plain one acknowledged with its timestamp, the read returns
// it with that timestamp (a Paxos write's cells take the ballot of the
// round that commits them, possibly a later proposer's). A replica that served corrupt or misdirected bytes shows up
// here, as does a write that reported "no effect" and had one. Reads of
// nothing and of tombstones are for the other checks.
CheckResult CheckReadsReturnWrittenValues(const History& history);

}  // namespace charybdis::sim
