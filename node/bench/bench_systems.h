#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proto/client.pb.h"

namespace charybdis::node {

// What one request of the real-node benchmark came to.
struct Outcome {
  bool ok = false;       // answered, without an error
  bool applied = false;  // conditional writes: the condition held
  std::string error;     // when not ok: the kind of error (counted by kind)
  std::optional<std::string> value;  // reads: the value, if there is one
};

using OutcomeDone = std::function<void(Outcome)>;

// A system the benchmark drives (docs/benchmarks.md): the same operations
// with each system's closest equivalent, each one request from one gRPC
// channel. Thread-safe: the benchmark's clients share one.
class BenchSystem {
 public:
  virtual ~BenchSystem() = default;
  virtual const std::string& name() const = 0;
  // Charybdis: QUORUM write / read. etcd: Put / linearizable Range.
  virtual Outcome Put(const std::string& key, const std::string& value) = 0;
  virtual Outcome Get(const std::string& key) = 0;
  // The read a compare-and-set loop starts from. Charybdis: SERIAL.
  virtual Outcome SerialGet(const std::string& key) = 0;
  // Sets `key` to `value` if it holds `expected` (nullopt: if it has no
  // value). Charybdis: IF v = expected / IF NOT EXISTS. etcd: a txn on
  // the value / on create_revision == 0.
  virtual Outcome CompareAndSet(const std::string& key, const std::optional<std::string>& expected,
                                const std::string& value) = 0;
  // Inserts a row per clustering key into `partition`, all or nothing, if
  // none of them exists, in one request. Charybdis: a conditional batch
  // (IF NOT EXISTS on each row). etcd: one txn guarding every key with
  // create_revision == 0.
  virtual Outcome InsertIfNotExists(const std::string& partition,
                                    const std::vector<std::string>& clustering_keys,
                                    const std::string& value) = 0;

  // The same without blocking, for loads with many requests in flight
  // (RunAsyncLoad): one thread keeps them all going, where a thread
  // blocked on each request cost the client process about a third of this
  // 2-core machine, which the systems measured then lacked. `done` runs on
  // a thread of the client library, or inside the call. By default the
  // blocking form runs inside the call, one request at a time: the gRPC
  // systems override these.
  virtual void StartPut(const std::string& key, const std::string& value, OutcomeDone done) {
    done(Put(key, value));
  }
  virtual void StartInsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                                      const std::string& value, OutcomeDone done) {
    done(InsertIfNotExists(partition, clustering_keys, value));
  }
  // Deletes `key`'s row at the write level (phase r's tombstones). Only
  // Charybdis's gRPC system has it; the others answer "unsupported".
  virtual void StartDelete(const std::string& key, OutcomeDone done) { done(Outcome{false, false, "unsupported"}); }
};

struct CharybdisClientOptions {
  std::string name = "charybdis";  // in reports: what kind of cluster this is
  std::string address;  // a node's client address
  uint32_t shards = 1;  // the node's, for shard-aware requests
  // Name the shard owning each key; else the node picks one and forwards,
  // as a driver that is not shard-aware makes it.
  bool shard_aware = true;
  // Of plain writes and reads, and the commit of conditional writes.
  ConsistencyLevel level = CL_QUORUM;
  std::string table = "kv";  // with a column v
};
std::unique_ptr<BenchSystem> ConnectCharybdis(const CharybdisClientOptions& options);
// The same over CQL's native protocol, with prepared statements, on the
// tables of BenchCqlSchema (bench.kv, and bench.rows for batches).
struct CqlClientOptions {
  std::string name = "charybdis cql";
  std::string address;  // a node's cql address
  ConsistencyLevel level = CL_QUORUM;
  std::string ca_file;  // not empty: through TLS, the node's certificate checked against this CA
};
std::unique_ptr<BenchSystem> ConnectCql(const CqlClientOptions& options);
// The cql_schema a cluster needs for ConnectCql's clients.
std::vector<std::string> BenchCqlSchema(uint32_t replication_factor);
// An etcd member's client address (host:port).
std::unique_ptr<BenchSystem> ConnectEtcd(const std::string& address);

}  // namespace charybdis::node
