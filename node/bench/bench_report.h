#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "node/bench/bench_phases.h"
#include "node/bench/machine_floor.h"

namespace charybdis::node {

// Phase q's mode: phase a through CQL ("charybdis cql") beside the same
// node's gRPC API ("charybdis"), compared with each other, not with etcd.
inline constexpr char kCqlMode[] = "group, RF=3, CQL vs gRPC";
inline constexpr char kCqlSystem[] = "charybdis cql";

// One line of the benchmark's table: a figure of ours beside the same
// figure of the system we compare with, in the same run.
struct Comparison {
  std::string title;   // "a. QUORUM put p50 (group)"
  std::string unit;    // us, ops/s, applied/s
  double ours = 0;
  double theirs = 0;
  std::string theirs_name;  // etcd, or charybdis for a ratio to our own put
  bool lower_is_better = true;
  std::optional<double> goal;  // the goal for ours / theirs

  double ratio() const { return theirs > 0 ? ours / theirs : 0; }
  bool met() const { return !goal || (lower_is_better ? ratio() <= *goal : ratio() >= *goal); }
};

// The comparisons of a set of runs: each charybdis run beside the etcd run
// of the same phase, measure and mode, with the goals of
// docs/benchmarks.md where the issue sets one.
std::vector<Comparison> Compare(const std::vector<PhaseRun>& runs);

// The machine's floor under phase a's group-mode QUORUM put and LWT,
// each beside etcd's p50 of the same measure: the lowest ratio to etcd
// this machine allows, whatever the goal. None without those etcd runs.
std::vector<Comparison> FloorComparisons(const MachineFloor& floor, const std::vector<PhaseRun>& runs);

// Phase m's goal: resident memory at the end within 20% of halfway.
inline constexpr double kMemoryGrowthGoal = 1.2;

// Phase m's line: resident memory after the last part beside after the
// fifth, when memtables and caches have warmed up; their ratio is the
// growth the goal bounds.
// None with fewer than two samples.
std::optional<Comparison> MemoryComparison(const std::vector<MemorySample>& samples, const std::string& mode);

// The table printed on stdout.
std::string ComparisonTable(const std::vector<Comparison>& comparisons);
// Every run and every comparison.
nlohmann::json ReportJson(const std::vector<PhaseRun>& runs, const std::vector<Comparison>& comparisons);
// A chart of the ratios (log scale, 1 = parity, goal marks).
std::string RatioChartSvg(const std::vector<Comparison>& comparisons);

}  // namespace charybdis::node
