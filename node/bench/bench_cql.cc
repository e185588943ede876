// The benchmark's requests to a Charybdis node through CQL's native
// protocol (v4), with prepared statements, as a driver sends them: the
// same operations as node/bench/bench_charybdis.cc over gRPC, so that the two
// APIs can be measured against each other on one cluster.
#include <mutex>

#include "absl/strings/str_cat.h"
#include "node/bench/bench_systems.h"
#include "node/bench/cql_connection.h"
#include "node/tls/tls_context.h"

namespace charybdis::node {
namespace {

using cql::Opcode;

constexpr char kPut[] = "INSERT INTO bench.kv (k, v) VALUES (?, ?)";
constexpr char kGet[] = "SELECT v FROM bench.kv WHERE k = ?";
constexpr char kInsertIfNotExists[] = "INSERT INTO bench.kv (k, v) VALUES (?, ?) IF NOT EXISTS";
constexpr char kSetIf[] = "UPDATE bench.kv SET v = ? WHERE k = ? IF v = ?";
constexpr char kRowIfNotExists[] = "INSERT INTO bench.rows (k, c, v) VALUES (?, ?, ?) IF NOT EXISTS";
const std::vector<std::string> kStatements = {kPut, kGet, kInsertIfNotExists, kSetIf, kRowIfNotExists};

// What an answer came to: an error's kind, a Rows result's first value.
Outcome OutcomeOf(const std::pair<Opcode, std::string>& answer) {
  Outcome outcome;
  cql::Reader in(answer.second);
  if (answer.first == Opcode::kError) {
    const int32_t code = in.Int();
    outcome.error = code == 0x1000   ? "UNAVAILABLE"
                    : code == 0x1100 ? "WRITE_TIMEOUT"
                    : code == 0x1200 ? "READ_TIMEOUT"
                    : code == 0x1300 ? "READ_FAILURE"
                    : code == 0x2200 ? "INVALID_REQUEST"
                    : answer.second.empty() ? "connection lost" : absl::StrCat("CQL error 0x", absl::Hex(code));
    return outcome;
  }
  const int32_t kind = in.Int();
  outcome.ok = answer.first == Opcode::kResult && in.ok();
  if (kind != 2) return outcome;  // Void
  const CqlRowsHeader rows = ReadRowsHeader(in);
  if (rows.rows > 0 && rows.columns > 0) {
    outcome.value = in.Bytes().bytes;
    // A conditional write's first column is [applied].
    outcome.applied = outcome.value && *outcome.value == std::string(1, 1);
  }
  outcome.ok = in.ok();
  return outcome;
}

class CqlSystem : public BenchSystem {
 public:
  explicit CqlSystem(const CqlClientOptions& options) : options_(options) {
    if (options.ca_file.empty()) return;
    auto tls = ClientContextTrusting(options.ca_file);
    if (tls.ok()) {
      tls_ = *std::move(tls);
    } else {
      tls_problem_ = std::string(tls.status().message());
    }
  }

  const std::string& name() const override { return options_.name; }

  Outcome Put(const std::string& key, const std::string& value) override {
    return Run([&](CqlConnection& c) { return c.Execute(kPut, {key, value}, options_.level); });
  }
  Outcome Get(const std::string& key) override {
    return Run([&](CqlConnection& c) { return c.Execute(kGet, {key}, options_.level); });
  }
  Outcome SerialGet(const std::string& key) override {
    return Run([&](CqlConnection& c) { return c.Execute(kGet, {key}, CL_SERIAL); });
  }
  Outcome CompareAndSet(const std::string& key, const std::optional<std::string>& expected,
                        const std::string& value) override {
    return Run([&](CqlConnection& c) {
      return expected ? c.Execute(kSetIf, {value, key, *expected}, options_.level)
                      : c.Execute(kInsertIfNotExists, {key, value}, options_.level);
    });
  }
  Outcome InsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                            const std::string& value) override {
    std::vector<std::vector<std::string>> rows;
    for (const std::string& clustering_key : clustering_keys) rows.push_back({partition, clustering_key, value});
    return Run([&](CqlConnection& c) { return c.Batch(kRowIfNotExists, rows, options_.level); });
  }

 private:
  // Each benchmark client takes a connection of its own from the pool.
  template <typename Request>
  Outcome Run(Request request) {
    std::unique_ptr<CqlConnection> connection;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        connection = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (connection == nullptr) {
      connection = std::make_unique<CqlConnection>();
      const std::string problem = tls_problem_.empty() ? connection->Open(options_.address, tls_, kStatements) : tls_problem_;
      if (!problem.empty()) {
        Outcome failed;
        failed.error = problem;
        return failed;
      }
    }
    Outcome outcome = OutcomeOf(request(*connection));
    // A connection that lost its stream is not reused.
    if (outcome.error != "connection lost") {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(std::move(connection));
    }
    return outcome;
  }

  const CqlClientOptions options_;
  std::shared_ptr<SSL_CTX> tls_;  // null: in clear
  std::string tls_problem_;       // why the CA could not be loaded
  std::mutex mutex_;
  std::vector<std::unique_ptr<CqlConnection>> idle_;
};

}  // namespace

std::vector<std::string> BenchCqlSchema(uint32_t replication_factor) {
  return {absl::StrCat("CREATE KEYSPACE bench WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': ",
                       replication_factor, "}"),
          "CREATE TABLE bench.kv (k blob PRIMARY KEY, v blob)",
          "CREATE TABLE bench.rows (k blob, c blob, v blob, PRIMARY KEY (k, c))"};
}

std::unique_ptr<BenchSystem> ConnectCql(const CqlClientOptions& options) { return std::make_unique<CqlSystem>(options); }

}  // namespace charybdis::node
