#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/env/probe.h"
#include "core/env/random.h"
#include "proto/scenario.pb.h"
#include "core/cql/connection.h"
#include "core/cql/wire.h"
#include "sim/cluster.h"
#include "sim/cql_schema_lives.h"
#include "sim/cql_frames.h"
#include "sim/cql_logged_batches.h"
#include "sim/cql_statements.h"
#include "sim/model/lwt_check.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Clients that speak CQL (proto/scenario.proto CqlWorkload; docs/scenarios.md
// "The CQL workload"): the first makes the table, with a random schema,
// through DDL; then each client sends its operations one after another
// on a core/cql connection to a node (another one when its node is down),
// and records each with its outcome and the nodes' clocks around it. At
// the end the history is held against the reference model.
class CqlWorkload final : public Workload {
 public:
  CqlWorkload(Simulator& simulator, Cluster& cluster, std::string name, const scenario::CqlWorkload& spec,
              Random random, Probes* probes);
  ~CqlWorkload() override;

  void Start() override;
  bool done() const override {
    return finished_clients_ == clients_.size() && schema_ready_ && (batches_.empty() || batches_.read_back_done());
  }
  nlohmann::json Results() const override;
  std::vector<CheckResult> Checks() const override;

 private:
  struct Client;

  std::vector<std::string> Ddl() const;
  void SendDdl(size_t index);
  // Client 0 reads the logged batches' partitions back, one by one.
  void ReadBack(uint32_t partition);
  void OnReadBackAnswer(const std::string& frame);
  void OnDdlAnswer(const std::string& frame);
  void StartClients();
  void SendNext(Client& client);
  // Connects the client to a running node that knows the table; false if
  // there is none now.
  bool Connect(Client& client);
  void Disconnect(Client& client);
  void OnAnswer(Client& client, const std::string& frame);
  // An error's outcome (a refusal is recorded as one), or nullopt when
  // the answer is not an error.
  std::optional<model::LwtOp::Outcome> FailedOutcome(const std::string& text, const CqlAnswer& answer);
  // Records an answer the operation cannot have (`why`, if known); its
  // outcome is unknown.
  model::LwtOp::Outcome Unreadable(const std::string& text, const std::string& why);
  // Sends a frame on the client's connection as its next operation;
  // returns the operation's number, whose stream its answer carries.
  uint64_t SendFrame(Client& client, cql::Opcode opcode, const std::string& body);
  uint64_t SendQuery(Client& client, const std::string& body) { return SendFrame(client, cql::Opcode::kQuery, body); }
  // Sends the client's outgoing statement, as a QUERY, or prepared, and
  // sets its give-up time.
  void Send(Client& client);
  // Whether this operation goes prepared (spec prepared_fraction).
  bool UsePrepared();
  // A conditional statement's commit level, drawn.
  ConsistencyLevel CommitLevel();
  // An answer to the PREPARE of a prepared operation, or an Unprepared
  // answer to its EXECUTE: the statement goes out again, and true.
  bool SentAgain(Client& client, const CqlAnswer& answer);
  // The schema client's next step of a column's or a table's life (spec
  // alter_table_every_ms; sim/cql_schema_lives.h): their lives take turns.
  void Alter();
  void AlterAfter(Nanos delay);
  // Alter after the pause the life asks for before its next step.
  void AlterNext();
  // The lives the schema client is in: a column's or a table's.
  SchemaLives& Lives() { return table_life_next_ ? table_lives_ : column_lives_; }
  // Counts a step's answer (null: none in time); a life that ended hands
  // over to the other kind.
  void OnLivesAnswer(const CqlAnswer* answer);
  void OnAlterAnswer(const std::string& frame);
  void Complete(Client& client, model::LwtOp::Outcome outcome);
  // Plain operations (spec plain_fraction): sent a page at a time, and
  // recorded in plain_history_.
  void SendPlain(Client& client);
  void SendPlainPage(Client& client, const std::optional<std::string>& paging_state);
  void OnPlainAnswer(Client& client, const CqlAnswer& answer);
  // A page of a plain read: its rows kept; false if it is not one the read
  // can have.
  bool ReadPage(Client& client, const CqlAnswer& answer);
  void CompletePlain(Client& client, model::LwtOp::Outcome outcome);
  // An ok scan's rows (or pk IN's) as one read of each plain partition
  // within its token() bounds (or IN list); what is wrong with them, if
  // anything: a partition's rows in two runs, one outside the bounds or
  // the list, or a scan's partitions out of ring order.
  std::string RecordScan(Client& client);
  // Either kind of operation is done: the client's next one, after its
  // think time.
  void Finished(Client& client);
  // Sets the operation's give-up time.
  void ScheduleTimeout(Client& client, uint64_t operation);
  // The replicas a plain operation's level waits for, of every datacenter's.
  uint32_t ReplicasOf(ConsistencyLevel level) const;
  void After(Client& client, Nanos delay);
  // What the nodes' clocks read from true time `from` to `to`: the earliest
  // and the latest of them, in microseconds, steps within the window
  // included.
  model::Moment ClockWindow(Nanos from, Nanos to) const;
  // Fills in an ok answer's result; false if it is not one the operation
  // can have.
  bool ReadAnswer(const CqlAnswer& answer, model::LwtOp& op) const;
  // NAME.plain_reads_admitted.
  CheckResult PlainCheck() const;
  // A row of an answer as the model's, by the answer's column names.
  bool ObservedRowOf(const CqlAnswer& answer, size_t row, model::ObservedRow& observed) const;

  Simulator& simulator_;
  Cluster& cluster_;
  const std::string name_;
  const scenario::CqlWorkload spec_;
  Random random_;
  Probes* const probes_;
  const StatementGenerator generator_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::unique_ptr<Client> schema_client_;  // with alter_table_every_ms
  SchemaLives column_lives_;
  SchemaLives table_lives_;
  bool table_life_next_ = false;
  // Each node's prepared statements, by node and its start: a restart
  // forgets them, as a node's CQL server does.
  std::map<std::pair<NodeId, uint64_t>, std::unique_ptr<cql::PreparedStatements>> node_statements_;
  bool schema_ready_ = false;
  size_t ddl_index_ = 0;
  size_t finished_clients_ = 0;
  std::vector<model::LwtOp> history_;
  std::vector<model::PlainOp> plain_history_;
  uint64_t plain_writes_ = 0;  // numbers each plain write's values
  LoggedBatches batches_;
  bool reading_back_ = false;
  uint32_t read_back_partition_ = 0;
  // Answers the model cannot judge: refused statements, undecodable frames.
  std::vector<std::string> refused_;
  std::map<std::string, uint64_t> outcomes_;  // "serial_read ok", "conditional applied", ...
};

}  // namespace charybdis::sim
