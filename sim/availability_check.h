#pragma once

#include "core/cluster/token_ring.h"
#include "core/workload/history.h"
#include "sim/health_log.h"
#include "sim/topology.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Safety checks say what an answer may not be; this one says when there
// must be one. Over any window in which an operation's coordinator and
// enough of its replicas for its level were well (health_log.h), from its
// call to its completion and for `recovery` after any unwell spell, a
// plain read, write or delete must succeed (ok) within its timeout. LWTs
// and serial reads are left out: contention may time them out with every
// node well. An operation the run ended before counts as failed.
CheckResult CheckAvailableWhenWell(const History& history, const HealthLog& health, const std::shared_ptr<const TokenRing>& ring,
                                   const Topology& topology, Nanos recovery, Nanos end);

}  // namespace charybdis::sim
