#pragma once

// What this machine's loopback and disk allow a request with no database
// in the way: the floor under a QUORUM put and an LWT here. The benchmark
// measures it in the same run as the systems it compares, so a goal below
// the floor shows as such (docs/benchmarks.md, "The machine's floor").

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace charybdis::node {

struct MachineFloor {
  // p50 of a 64-byte TCP ping-pong between two threads on loopback.
  int64_t loopback_round_trip_us = 0;
  // p50 of a 200-byte write followed by fdatasync, `sync_writers` threads
  // at once, each on its own file preallocated with its size set (as
  // RocksDB preallocates its WAL).
  int64_t fdatasync_us = 0;
  uint32_t sync_writers = 0;

  // A QUORUM put whose coordinator is a replica: the client's round trip,
  // the round trip to a second replica, and the replicas' fdatasyncs,
  // which run at once on a shared disk.
  int64_t quorum_put_us() const { return 2 * loopback_round_trip_us + fdatasync_us; }
  // An uncontended LWT with its promises in memory (docs/lwt.md): a put
  // whose accept follows a prepare round trip.
  int64_t lwt_us() const { return quorum_put_us() + loopback_round_trip_us; }
};

// p50 of `round_trips` loopback ping-pongs.
absl::StatusOr<int64_t> MeasureLoopbackRoundTripUs(uint32_t round_trips);

// p50 over every fdatasync of `writers` threads, each doing `syncs_each`
// writes and fdatasyncs at once, on files in `directory` (removed after).
absl::StatusOr<int64_t> MeasureFdatasyncUs(const std::string& directory, uint32_t writers, uint32_t syncs_each);

// Writing `bytes` to a fresh file in `directory` in 1 MiB writes, then one
// fdatasync: what storing streamed data cannot beat here (phase j).
absl::StatusOr<double> MeasureSequentialWriteBytesPerSecond(const std::string& directory, uint64_t bytes);

// Both, with the shapes above: 3 writers, as 3 replicas on one disk.
absl::StatusOr<MachineFloor> MeasureMachineFloor(const std::string& directory);

}  // namespace charybdis::node
