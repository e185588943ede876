// The benchmark's requests to a Charybdis node, through its gRPC API.
#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "core/data/token.h"
#include "node/bench/bench_systems.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

namespace {

constexpr auto kRequestDeadline = std::chrono::seconds(10);

class CharybdisSystem : public BenchSystem {
 public:
  explicit CharybdisSystem(const CharybdisClientOptions& options)
      : options_(options), stub_(ConnectClient(options.address)) {}

  const std::string& name() const override { return options_.name; }

  Outcome Put(const std::string& key, const std::string& value) override {
    return Execute(key, PutRequest(key, value));
  }
  void StartPut(const std::string& key, const std::string& value, OutcomeDone done) override {
    StartExecute(key, PutRequest(key, value), std::move(done));
  }
  void StartDelete(const std::string& key, OutcomeDone done) override {
    ClientRequest request;
    WriteOp& write = *request.mutable_write();
    write.set_table(options_.table);
    write.set_partition_key(key);
    write.set_delete_row(true);
    write.set_consistency(options_.level);
    StartExecute(key, std::move(request), std::move(done));
  }

  Outcome Get(const std::string& key) override { return Read(key, options_.level); }
  Outcome SerialGet(const std::string& key) override { return Read(key, CL_SERIAL); }

  Outcome CompareAndSet(const std::string& key, const std::optional<std::string>& expected,
                        const std::string& value) override {
    ClientRequest request;
    CasStatement& statement = *request.mutable_cas()->add_statement();
    *statement.mutable_write() = Write(key, "", value);
    if (expected) {
      Condition& condition = *statement.add_condition();
      condition.set_column("v");
      condition.set_op(Condition::EQ);
      condition.set_value(*expected);
    } else {
      statement.set_if_not_exists(true);
    }
    request.mutable_cas()->set_commit_consistency(options_.level);
    return Execute(key, std::move(request));
  }

  Outcome InsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                            const std::string& value) override {
    return Execute(partition, InsertRequest(partition, clustering_keys, value));
  }
  void StartInsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                              const std::string& value, OutcomeDone done) override {
    StartExecute(partition, InsertRequest(partition, clustering_keys, value), std::move(done));
  }

 private:
  // What an asynchronous call keeps until its answer.
  struct Call {
    grpc::ClientContext context;
    ExecuteRequest execute;
    ClientResponse response;
  };

  ClientRequest PutRequest(const std::string& key, const std::string& value) const {
    ClientRequest request;
    *request.mutable_write() = Write(key, "", value);
    request.mutable_write()->set_consistency(options_.level);
    return request;
  }

  ClientRequest InsertRequest(const std::string& partition, const std::vector<std::string>& clustering_keys,
                              const std::string& value) const {
    ClientRequest request;
    for (const std::string& clustering_key : clustering_keys) {
      CasStatement& statement = *request.mutable_cas()->add_statement();
      *statement.mutable_write() = Write(partition, clustering_key, value);
      statement.set_if_not_exists(true);
    }
    request.mutable_cas()->set_commit_consistency(options_.level);
    return request;
  }

  WriteOp Write(const std::string& key, const std::string& clustering_key, const std::string& value) const {
    WriteOp write;
    write.set_table(options_.table);
    write.set_partition_key(key);
    write.set_clustering_key(clustering_key);
    ColumnValue& put = *write.add_put();
    put.set_column("v");
    put.set_value(value);
    return write;
  }

  Outcome Read(const std::string& key, ConsistencyLevel level) {
    ClientRequest request;
    ReadOp& read = *request.mutable_read();
    read.set_table(options_.table);
    read.set_partition_key(key);
    read.set_consistency(level);
    return Execute(key, std::move(request));
  }

  ExecuteRequest Addressed(const std::string& partition_key, ClientRequest request) const {
    ExecuteRequest execute;
    *execute.mutable_request() = std::move(request);
    if (options_.shard_aware) {
      execute.set_has_shard(true);
      execute.set_shard(ShardOf(TokenOf(partition_key), options_.shards));
    }
    return execute;
  }

  Outcome Execute(const std::string& partition_key, ClientRequest request) {
    const ExecuteRequest execute = Addressed(partition_key, std::move(request));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kRequestDeadline);
    ClientResponse response;
    return OutcomeOf(stub_->Execute(&context, execute, &response), response);
  }

  void StartExecute(const std::string& partition_key, ClientRequest request, OutcomeDone done) {
    auto call = std::make_shared<Call>();
    call->execute = Addressed(partition_key, std::move(request));
    call->context.set_deadline(std::chrono::system_clock::now() + kRequestDeadline);
    stub_->async()->Execute(&call->context, &call->execute, &call->response,
                            [call, done = std::move(done)](grpc::Status status) {
                              done(OutcomeOf(status, call->response));
                            });
  }

  static Outcome OutcomeOf(const grpc::Status& status, const ClientResponse& response) {
    Outcome outcome;
    if (!status.ok()) {
      outcome.error = absl::StrCat("grpc ", status.error_code());
    } else if (response.code() != ClientResponse::OK) {
      outcome.error = ClientResponse::Code_Name(response.code());
    } else {
      outcome.ok = true;
      outcome.applied = response.applied();
      for (const ResultRow& row : response.rows()) {
        for (const ResultCell& cell : row.cells()) {
          if (cell.column() == "v") outcome.value = cell.value();
        }
      }
    }
    return outcome;
  }

  const CharybdisClientOptions options_;
  std::unique_ptr<Client::Stub> stub_;
};

}  // namespace

std::unique_ptr<BenchSystem> ConnectCharybdis(const CharybdisClientOptions& options) {
  return std::make_unique<CharybdisSystem>(options);
}

}  // namespace charybdis::node
