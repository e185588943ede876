#pragma once

// `charybdis-ctl calibrate`: measures this machine's message hops and disk
// latencies through the real runtime, from request traces (core/telemetry/tracing.h),
// and writes them as a simulation profile (the `network` and `storage`
// blocks of a scenario), so that `./charybdis sim --profile=FILE` runs any
// scenario on this machine's latencies.

#include <map>
#include <string>
#include <vector>

#include "proto/client.pb.h"
#include "proto/scenario.pb.h"

namespace charybdis::node {

// Samples of each kind of step, in microseconds.
struct HopSamples {
  std::vector<int64_t> between_nodes;  // a message sent to another node, until received
  std::vector<int64_t> within_node;    // to a shard of the same node
  std::vector<int64_t> sync;           // a synced write issued, until durable
  std::vector<int64_t> read;           // a replica read received, until its storage read is done
  // A request's round trip as its client timed it, less its timeline on
  // the nodes: the client's own work and its two hops to the node.
  std::vector<int64_t> client;
  uint32_t client_cores = 1;  // of the machine the client ran on
  // Per burst of requests released together: the spacing at which they
  // reached the node, as one core's share per request (CollectBurst).
  std::vector<int64_t> send_spacing_us;
};

// Adds the samples one traced answer's timeline holds.
void CollectHops(const ClientResponse& traced, HopSamples& samples);
// Adds the client's part of a traced request that took `round_trip_us`.
void CollectClientCost(const ClientResponse& traced, int64_t round_trip_us, HopSamples& samples);

// When a traced request reached its first node: its earliest step.
// REQUIRES: a traced answer.
int64_t FirstStepUs(const ClientResponse& traced);
// Adds a burst: when each of its requests, released together by clients
// on `samples.client_cores` cores, reached the node. The first and the
// last arrivals are ceil(n / cores) - 1 shares of a core apart, so a
// share is their distance over that; a burst of no more requests than
// cores tells nothing.
void CollectBurst(std::vector<int64_t> arrivals_us, HopSamples& samples);

// min (the 5th percentile) and the mean of the exponential jitter above it
// that puts the simulated median on the measured one.
scenario::Latency FitLatency(std::vector<int64_t> samples_us);

// The profile the samples make: network intra_dc and intra_node, storage
// read, write and sync (a sync includes its write), and the client
// machine: what a request costs its client beyond the two hops to the
// node, which the simulator charges as hops between nodes, and the median
// burst's spacing as the share of it that holds a core.
scenario::Scenario ProfileOf(const HopSamples& samples);

}  // namespace charybdis::node
