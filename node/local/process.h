#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace charybdis::node {

// Child processes of a test or benchmark harness (local clusters of our
// nodes, etcd members): started detached, their output in a log file.

// Free loopback ports, all held until every one is picked (so they differ).
absl::StatusOr<std::vector<int>> FreePorts(size_t count);

// Whether every port of `ports` binds on `ip` now.
bool PortsFree(const std::string& ip, const std::vector<int>& ports);

// A block of loopback addresses for `nodes` nodes, as ccm gives them:
// 127.0.B.1 to 127.0.B.nodes, on each of which every port of `ports` is
// free now. Clusters started at once take different blocks: the search
// starts at a block drawn from the process id. Unavailable when no block
// is free, or when this machine cannot bind 127.0.B.x (then a cluster
// takes ports on 127.0.0.1 instead).
absl::StatusOr<int> FreeLoopbackBlock(size_t nodes, const std::vector<int>& ports);

// Starts `binary` with `arguments` (argv[1..]) in its own session (so it
// outlives us and a terminal's ^C), stdout and stderr appended to
// `log_path`, stdin from /dev/null. Returns its pid.
absl::StatusOr<int> StartDetached(const std::string& binary, const std::vector<std::string>& arguments,
                                  const std::string& log_path);

// From now on, SIGINT and SIGTERM kill every process StartDetached started
// (and Alive has not seen exit) before this process exits: a benchmark
// interrupted with ^C leaves no cluster behind. (ctl does not call it: its
// clusters are meant to outlive it.)
void KillChildrenOnInterrupt();

// Whether `pid` runs (reaping it if it is our child and exited).
bool Alive(int pid);

// SIGCONT and SIGTERM to each (all at once, so they stop in parallel),
// then SIGKILL to any still there after `timeout_ms`; waits until all are
// gone. Returns the pids that had to be killed.
std::vector<int> Terminate(const std::vector<int>& pids, int timeout_ms);

// SIGKILL, and waits until it is gone.
void KillNow(int pid);

std::string ReadFile(const std::string& path);
// The last `lines` lines of a file, for error messages.
std::string Tail(const std::string& path, size_t lines = 5);

}  // namespace charybdis::node
