#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace charybdis::sim {

// Merges the JSON reports of sweep slices (each a `--shard=I/N
// --report=FILE` run) into what one sweep over all of them would say:
// the runs, the failing ones with the command that replays each, and the
// probes no run reached. Writes the merged array to `report` unless it is
// empty. Returns the worst exit code of the runs, or kExitBadInput for an
// unreadable file or slices that overlap.
int MergeReports(const std::vector<std::string>& files, const std::string& report,
                 std::ostream& out, std::ostream& err);

}  // namespace charybdis::sim
