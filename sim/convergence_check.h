#pragma once

#include <set>
#include <string>

#include "sim/cluster.h"
#include "core/workload/history.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Every running replica of every key the history touched holds the same
// data for it (read straight from the replicas' disks).
CheckResult CheckReplicasConverge(const Cluster& cluster, const History& history);

// Every acknowledged plain write (ANY included; not Paxos writes) is held,
// as itself or a newer version, on the disk of at least one running
// replica of its key. Writes whose replicas are all down are not checked.
CheckResult CheckAcknowledgedWritesKept(const Cluster& cluster, const History& history);

// No acknowledged delete is undone (docs/repair.md, "Tombstone GC"): for
// every key deleted with an acknowledgement, the merge of every replica's
// disk, running or not, holds no live version at or before the delete.
CheckResult CheckNoResurrection(const Cluster& cluster, const History& history);

// What a repair of `node` that began at `started` and succeeded promises
// (docs/repair.md): every acknowledged plain write acknowledged before
// `started`, to a key `node` replicates, is held, as itself or a newer
// version, on the disk of every replica of its key, running or not.
CheckResult CheckRepairedWritesEverywhere(const Cluster& cluster, const History& history, NodeId node,
                                          Nanos started, const std::string& name);

}  // namespace charybdis::sim
