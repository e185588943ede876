#include "node/ctl/ctl_help.h"

#include <string_view>

namespace charybdis::node {

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line, for the overview
  std::string_view usage;    // the full text of COMMAND --help
};

// Every command, in the order the overview lists them.
constexpr Command kCommands[] = {
  {"put", "a write (default QUORUM)",
   "put TABLE KEY COLUMN=VALUE...\n"
   "  Writes the columns of the partition's row at --cl (default QUORUM).\n"},
  {"get", "a read of the partition's row",
   "get TABLE KEY\n  Reads the partition's row at --cl (default QUORUM).\n"},
  {"delete", "a row delete", "delete TABLE KEY\n  Deletes the partition's row at --cl (default QUORUM).\n"},
  {"cas", "a conditional write through Paxos",
   "cas TABLE KEY COLUMN=VALUE... [--if-not-exists | --if-exists | --if COLUMN=VALUE ...]\n"
   "  A lightweight transaction: applied only if every condition holds.\n"
   "  --serial SERIAL|LOCAL_SERIAL (default SERIAL): who takes part in Paxos.\n"},
  {"serial-get", "a read at SERIAL",
   "serial-get TABLE KEY\n  A linearizable read through Paxos; --serial LOCAL_SERIAL for one datacenter.\n"},
  {"status", "the members as nodetool status shows them, and who is up as each node sees it",
   "status\n  Asks every node of the cluster (or --address) for its view, and prints, per\n"
   "  datacenter, one line per member: U or D (up or down, as the first node that\n"
   "  answers sees it), N normal, J joining or L leaving, address, load (the bytes the\n"
   "  node stores), tokens, effective ownership (the share of the token space it\n"
   "  replicates), host id and rack. Then each node's view of who is up.\n"},
  {"ring", "every vnode token, as nodetool ring shows them",
   "ring\n  Per datacenter, one line per vnode in token order: address, rack, Up or\n"
   "  Down (as the first node that answers sees it), state, load, effective\n"
   "  ownership and token.\n"},
  {"decommission", "a node streams its data away, then leaves the cluster",
   "decommission N [--timeout 600]\n"
   "  Node N of the local cluster (--dir; or --address, N's client address)\n"
   "  begins its decommission and drives it: the nodes that take over its\n"
   "  ranges stream them from it, reads move to them, and N leaves for good (its\n"
   "  id never comes back). Prints each change of the topology it sees, and\n"
   "  returns once N has left (exit 0), or the cluster refused or rolled it back,\n"
   "  or --timeout seconds passed while it goes on (exit 1). One operation runs at\n"
   "  a time; the refusal names the one in progress. docs/topology.md.\n"},
  {"removenode", "the others restore a dead node's replicas, and it leaves",
   "removenode N [--driver M] [--timeout 600]\n"
   "  Node N is dead for good: node M (default the first other node of the local\n"
   "  cluster; with --address, the address is M's and --driver is needed) drives\n"
   "  its removal: each range N held streams to its new owner from every replica\n"
   "  that survives, then N leaves for good. Progress and exit status as\n"
   "  decommission.\n"},
  {"replace", "a new node takes a dead node's place and tokens",
   "replace N [--timeout 600]\n"
   "  Node N of the local cluster (--dir) is dead for good (cluster kill N\n"
   "  first: a live node is not replaced). A new node, the next number, starts\n"
   "  on N's rack with empty data, takes N's tokens, and each range N held\n"
   "  streams to it from every replica that survives; then it is normal and N\n"
   "  has left for good. Progress and exit status as cluster add.\n"},
  {"rollback", "undoes the topology operation in progress on a node",
   "rollback N [--node M]\n"
   "  Appends a roll-back of the operation in progress on node N (a join,\n"
   "  replacement, decommission or removenode), through node M of the local\n"
   "  cluster (default node 1, or 2 when N is 1; or the node at --address). A\n"
   "  joining or replacing N then has left for good (its id is spent: start\n"
   "  the node again with a new id and empty data); a leaving N is normal\n"
   "  again. Refused once the operation's reads moved to the new replicas: it\n"
   "  can then only finish. Run `cleanup` on the nodes that received streams.\n"
   "  docs/topology.md.\n"},
  {"cleanup", "nodes remove the data of ranges they no longer replicate",
   "cleanup N [N...] [--timeout 600]\n"
   "  After a join (or a replacement on another rack) the old owners of the\n"
   "  ranges that moved still hold their rows and Paxos states. Each node N of\n"
   "  the local cluster (--dir; or the node at --address, with no N) in turn\n"
   "  removes them, and prints the pairs and bytes it removed. Refused while a\n"
   "  topology operation is in progress, or while the node catches up with its\n"
   "  peers' topology; a cleanup the topology overtakes stops, keeping what it\n"
   "  removed, and may be run again. Exit 0 when every node cleaned up.\n"
   "  docs/topology.md, \"Cleanup\".\n"},
  {"repair", "replicas of the nodes' ranges come to agree",
   "repair [KEYSPACE [TABLE]] [--primary-range] [--range START:END] [--dc NAME]\n"
   "       [--node N | --address A] [--timeout 3600]\n"
   "  Replicas that missed writes (a node down past the hint window, hints\n"
   "  off, lost messages) hold old data until a read repairs it; repair makes\n"
   "  them agree without reads. The repairing node compares, range by range,\n"
   "  hashes of its rows with each other replica's, and sends each replica\n"
   "  only the rows it lacks (last write wins). Without --node or --address\n"
   "  every node of the local cluster (--dir) repairs its primary ranges in\n"
   "  turn, so that each range is repaired once; --node N repairs every range\n"
   "  N replicates (or its primary ones, --primary-range). Only KEYSPACE's\n"
   "  tables (TABLE's); only tokens in (START, END]; only the replicas in\n"
   "  datacenter NAME (with --node or --address). Prints per node the ranges\n"
   "  in agreement, rows compared and differing, rows fetched and sent, and\n"
   "  their bytes. Refused during a topology operation; a repair that loses a\n"
   "  replica stops, keeping what it repaired, and says where: run it again.\n"
   "  Exit 0 when every node repaired. docs/repair.md.\n"},
  {"compact", "nodes purge deletions their tables' tombstone GC lets go",
   "compact [KEYSPACE [TABLE]] [--node N | --address A]\n"
   "  Each node of the local cluster (--dir) in turn, or node N, or the node\n"
   "  at A, scans its tables (KEYSPACE's, TABLE's) and deletes obsolete\n"
   "  versions and every deletion its table's tombstone GC lets go (row and\n"
   "  cell tombstones, expired cells) with all it shadows, then compacts its\n"
   "  RocksDB stores fully so the space comes back, and prints the pairs and\n"
   "  bytes deleted. A table's mode (CREATE TABLE ... WITH\n"
   "  tombstone_gc = {'mode': ...}): repair (the default: once a repair begun\n"
   "  after the deletion covered it), timeout (after gc_grace_seconds),\n"
   "  immediate or disabled. Exit 0 when every node compacted.\n"
   "  docs/repair.md, \"Tombstone GC\".\n"},
  {"metrics", "a node's /metrics text", "metrics\n  Prints the Prometheus text of --node or --address.\n"},
  {"bench", "latency and throughput of puts, gets, LWTs or lock-step contention",
   "bench put|get|cas [--count 20000] [--prefix P] [--in-flight N] [--cl LEVEL]\n"
   "  Latency percentiles and throughput; cas is IF NOT EXISTS on fresh keys.\n"
   "bench contend --in-flight 16 --count 312\n"
   "  Lock-step contention on one key: each client's COUNT attempts of a\n"
   "  SERIAL read, then IF v = (what it read).\n"},
  {"calibrate", "this machine's hop and disk latencies, as a simulation profile",
   "calibrate [--count 300] [--out FILE]\n"
   "  Traces puts and gets and writes the latencies as a sim profile\n"
   "  (./charybdis sim --profile=FILE).\n"},
  {"cluster", "a local cluster: up, add, down, kill, start, stop, partition, heal",
   "cluster up [-n 3] [--smp 2] [--rf 3] [--cql-schema FILE] [--ports] [--auth] [--tls]\n"
   "  Starts a local cluster in --dir (FILE: CREATE KEYSPACE/TABLE statements).\n"
   "  --auth: CQL asks for a role and password; the superuser's name and a\n"
   "  random password are in DIR/superuser.txt (docs/security.md).\n"
   "  --tls: TLS on the CQL port (required), the gRPC API and between nodes\n"
   "  (mutual); a throwaway CA made with openssl signs every node's certificate,\n"
   "  and clients check them against DIR/ca.pem (ctl does so by itself).\n"
   "  Each node gets an address of its own, 127.0.B.N, on the standard ports\n"
   "  (CQL 9042, shard-aware 19042, internode 7000, client 9160, metrics 9180),\n"
   "  B a block no other cluster uses; --ports puts every node on 127.0.0.1 on\n"
   "  free ports of its own instead (the fallback where no block is free).\n"
   "cluster add [--rack R] [--timeout 600]\n"
   "  Starts a new node, the next number, on the next address (a rack of its\n"
   "  own unless --rack). It reads the cluster's logs from the members, asks to\n"
   "  join and streams the ranges it gains; ctl prints what it waits for and\n"
   "  its progress, and returns once it is normal (exit 0), or its join was\n"
   "  rolled back or the timeout passed (exit 1; the join goes on).\n"
   "cluster down                    stops it and deletes its directory\n"
   "cluster kill N | start N | stop N\n"
   "  One node (kill = SIGKILL; kill --power also drops what it had not fsync'd).\n"
   "cluster partition N --from M    N and M drop each other's traffic\n"
   "cluster heal                    undoes every partition\n"},
  {"run-scenario", "a scenario's workloads, faults and checkers on real nodes",
   "run-scenario FILE [--seed 1] [-n N] [--keep]\n"
   "  Runs a simulation scenario's workloads and faults against a fresh local\n"
   "  cluster and checks its history as the simulator would (docs/node.md).\n"},
};

}  // namespace

std::string CtlOverview() {
  std::string text =
      "charybdis-ctl: the client of real nodes and a local cluster manager (docs/node.md)\n\n"
      "usage: charybdis-ctl [--address=HOST:PORT | --node=N] [--cl=LEVEL] COMMAND ...\n\n"
      "commands:\n";
  for (const Command& command : kCommands) {
    std::string name(command.name);
    name.resize(14, ' ');
    text += "  " + name + std::string(command.summary) + "\n";
  }
  text +=
      "\n"
      "  --node=N talks to node N of the local cluster in --dir ($CHARYBDIS_CLUSTER_DIR\n"
      "  or /tmp/charybdis-cluster); --ca=FILE checks --address's TLS certificate\n"
      "  against that CA (a local cluster's DIR/ca.pem is used by itself);\n"
      "  --user=ROLE --password-file=FILE: who ctl is, to nodes that ask for\n"
      "  passwords (a local cluster's superuser, DIR/superuser.txt, by itself);\n"
      "  --json prints answers as JSON; --trace prints a\n"
      "  request's timeline, hop by hop. `charybdis-ctl COMMAND --help` tells more.\n"
      "  Exit status: 0 ok, 1 the request failed (the answer says why), 2 bad usage.\n";
  return text;
}

std::optional<std::string> CtlCommandHelp(std::string_view command) {
  for (const Command& known : kCommands) {
    if (known.name == command) return "usage: charybdis-ctl [--address=HOST:PORT | --node=N] " + std::string(known.usage);
  }
  return std::nullopt;
}

}  // namespace charybdis::node
