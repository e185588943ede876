#pragma once

#include <set>
#include <string>

#include "core/data/partition.h"
#include "proto/client.pb.h"

namespace charybdis {

// Fills an answer with what a client sees of `partition` at `now`: its
// live rows (those in `only`, if given), cells alive at `now`, and the
// newest timestamp of anything in it, tombstones included.
void AddVisibleRows(const Partition& partition, Timestamp now, const std::set<std::string>* only,
                    ClientResponse& response);

}  // namespace charybdis
