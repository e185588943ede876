#pragma once

#include <string_view>

namespace charybdis {

// Rare paths, marked in the spirit of FoundationDB's CODE_PROBE and
// Antithesis's "sometimes" assertions: reaching one means nothing went
// wrong, but a sweep that never reaches it never tested what follows.
// The runtime counts them (the simulator per run and per sweep; real
// nodes ignore them). Every probe is listed here, so a report can name
// the ones a sweep missed, and CHARYBDIS_PROBE refuses at compile time a
// name that is not.
inline constexpr std::string_view kProbes[] = {
    // Paxos, proposer side (core/paxos/proposer.cc).
    "paxos.refused_by_higher_ballot",
    "paxos.disk_refused_promise",
    "paxos.fenced_promise",
    "paxos.retry_above_latest_commit",
    "paxos.finish_in_progress_round",
    "paxos.repair_missing_commit",
    "paxos.repair_after_prune",
    "paxos.partial_accept",
    "paxos.fate.committed",
    "paxos.fate.unknown",
    "paxos.fate.propose_again",
    "paxos.fate.decided_above",
    "paxos.fate.uncertain",
    "paxos.commit_repair_failed",
    "paxos.late_writes_run_again",
    // Paxos, acceptor side (core/paxos/acceptor.cc).
    "paxos.acceptor.refuse_prepare",
    "paxos.acceptor.refuse_accept",
    "paxos.acceptor.raise_horizon",
    "paxos.acceptor.merge_streamed",
    "paxos.acceptor.fence_raised",
    "paxos.acceptor.fenced_by_repair",
    "paxos.acceptor.ignore_repaired_accept",
    "paxos.acceptor.state_purged",
    "paxos.acceptor.late_commit_past_horizon",
    // Reads (core/coordinator/read_executor.cc).
    "read.speculative_retry",
    "read.replace_refused_replica",
    "read.failed_refused",
    "read.repair.foreground_write_back",
    "read.repair.background",
    "read.repair.late_digest",
    "read.repair.spare_write",
    "read.repair.cut_at_first_stop",
    "read.dead_rows_read_past",
    "read.finish_paxos_first",
    "read.finish_paxos_again",
    // Writes and hints (core/coordinator/write_handler.cc, core/hints/).
    "write.hint_on_timeout",
    "write.rerun_after_fence",
    "write.fenced_and_behind",
    "write.rerun_refused",
    "scan.rerun_after_fence",
    "scan.fenced_and_behind",
    // A scan round met an unfinished Paxos round: finished first, then
    // the round runs again (core/coordinator/scan_handler.cc).
    "scan.finish_paxos_first",
    "replica.scan_before_paxos_loaded",
    "replica.write_fenced",
    "replica.paxos_fenced",
    "replica.replay_past_horizon_dropped",
    "replica.read_fenced",
    "replica.read_stopped_at_limit",
    "replica.scan_fenced",
    "hints.expired_window",
    "hints.replayed",
    "hints.replay_timed_out",
    "hints.replay_refused_by_disk",
    "hints.dropped_for_left_node",
    // Storage (core/replica/stored_partition.cc, core/paxos/acceptor.cc,
    // core/hints/hint_manager.cc, core/cluster/failure_detector.cc).
    "storage.corrupt_entry",
    "storage.corrupt_paxos_state",
    "storage.corrupt_paxos_horizon",
    "storage.corrupt_paxos_fence",
    "storage.corrupt_hint",
    "storage.corrupt_generation",
    "storage.corrupt_stream_progress",
    // Streaming (core/replica/range_stream.cc).
    "stream.resumed",
    "stream.ingestion_failed",
    "stream.asked_again",
    // Cleanup (core/topology/node_cleanup.cc, core/replica/range_cleanup.cc).
    "cleanup.started",
    "cleanup.refused",
    "cleanup.done",
    "cleanup.shard_started",
    "cleanup.pairs_removed",
    "cleanup.shard_stopped",
    // Repair (core/repair/).
    "repair.started",
    "repair.refused",
    "repair.done",
    "repair.shard_stopped",
    "repair.rows_differed",
    "repair.rows_sent",
    "repair.range_repaired",
    "repair.paxos_round_finished",
    "repair.yielded_to_clients",
    "gc.purged",
    "gc.dropped_table_reclaimed",
    "gc.compaction_of_its_own",
    // The batch log and the schema agent (core/batchlog/, core/schema/,
    // core/coordinator/held_for_schema.cc).
    "batchlog.replayed",
    "schema.append_lost_race",
    "schema.behind_a_peer",
    "schema.shard_behind_node",
    "schema.read_before_refusing",
    "schema.replication_change_asked",
    // The topology agent (core/topology/topology_agent.cc).
    "topology.barrier_answered",
    "topology.barrier_behind",
    "topology.behind_a_peer",
    "topology.copy_asked_while_reading",
    "topology.driver_append_failed",
    "topology.driver_final_barrier_passed",
    "topology.driver_finishes",
    "topology.driver_resends_streams",
    "topology.driver_schema_append_failed",
    "topology.driver_stream_not_done",
    "topology.driver_streamed",
    "topology.driver_streams",
    "topology.entry_copied_from_peer",
    "topology.entry_read",
    "topology.join_asked",
    "topology.join_refused",
    "topology.join_waits_for_schema",
    "topology.local_copy_lost",
    "topology.proposal_lost_race",
    "topology.replication_change_rolled_back",
    "topology.read_before_refusing",
    "topology.read_failed",
    "topology.replacement_waits_for_death",
    "topology.serving_without_peers",
    // CQL (core/cql/connection.cc): an EXECUTE the node must refuse.
    "cql.unprepared",
    "cql.prepared_outdated_by_schema",
    // CQL paging (core/cql/select_plan.cc): a page that ends where one of
    // the SELECT's slices (a partition, an IN value) ends.
    "cql.page_ends_at_slice_end",
    "cql.page_resumes_after_single_row",
    "cql.page_ends_where_a_read_stopped",
    // A read of a table with a column dropped and added again
    // (core/cql/select_plan.cc): its old cells must stay unread.
    "cql.read_of_column_added_again",
    // Logins and permissions (core/cql/connection_auth.cc, login.cc): a
    // token that is not SASL PLAIN, a wrong password, a login slowed down
    // after failures, a statement refused for a permission its role
    // lacks, a creator's grant or a dropped resource's revokes that failed
    // after the schema changed.
    "auth.malformed_token",
    "auth.login_failed",
    "auth.login_slowed",
    "auth.permission_refused",
    "auth.schema_change_grants_failed",
    // The read cache (core/read_cache/read_cache.cc).
    "read_cache.fill_overtaken_by_write",
    "read_cache.evicted_for_capacity",
    // Failure detection (core/cluster/failure_detector.cc).
    "failure_detector.answered_stranger",
    "failure_detector.convicted",
    "failure_detector.recovered",
};

constexpr bool IsProbe(std::string_view name) {
  for (std::string_view probe : kProbes) {
    if (probe == name) return true;
  }
  return false;
}

class Probes {
 public:
  virtual ~Probes() = default;
  virtual void Reached(std::string_view probe) = 0;
};

class NoProbes final : public Probes {
 public:
  void Reached(std::string_view) override {}
  // Stateless: one for every runtime that does not count.
  static Probes* Instance() {
    static NoProbes none;
    return &none;
  }
};

}  // namespace charybdis

// Marks a rare path: CHARYBDIS_PROBE(env_.probes, "paxos.fate.committed").
#define CHARYBDIS_PROBE(probes, name)                                           \
  do {                                                                          \
    static_assert(::charybdis::IsProbe(name), "list " name " in core/env/probe.h"); \
    (probes)->Reached(name);                                                    \
  } while (false)
