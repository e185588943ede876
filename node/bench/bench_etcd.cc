// The benchmark's requests to an etcd member, through etcd v3's KV API
// (proto/etcd_kv.proto).
#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "node/bench/bench_systems.h"
#include "proto/etcd_kv.grpc.pb.h"

namespace charybdis::node {

namespace {

using etcdserverpb::Compare;

constexpr auto kRequestDeadline = std::chrono::seconds(10);

// Rows of one partition are keys PARTITION/CLUSTERING_KEY.
std::string RowKey(const std::string& partition, const std::string& clustering_key) {
  return clustering_key.empty() ? partition : absl::StrCat(partition, "/", clustering_key);
}

class EtcdSystem : public BenchSystem {
 public:
  explicit EtcdSystem(const std::string& address)
      : stub_(etcdserverpb::KV::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

  const std::string& name() const override { return name_; }

  Outcome Put(const std::string& key, const std::string& value) override {
    etcdserverpb::PutResponse response;
    grpc::ClientContext context;
    return Done(stub_->Put(Deadline(context), PutOf(key, value), &response));
  }
  void StartPut(const std::string& key, const std::string& value, OutcomeDone done) override {
    auto call = std::make_shared<Call<etcdserverpb::PutRequest, etcdserverpb::PutResponse>>();
    call->request = PutOf(key, value);
    stub_->async()->Put(Deadline(call->context), &call->request, &call->response,
                        [call, done = std::move(done)](grpc::Status status) { done(Done(status)); });
  }

  // etcd's Range is linearizable unless asked to be serializable.
  Outcome Get(const std::string& key) override {
    etcdserverpb::RangeRequest request;
    request.set_key(key);
    etcdserverpb::RangeResponse response;
    grpc::ClientContext context;
    Outcome outcome = Done(stub_->Range(Deadline(context), request, &response));
    if (outcome.ok && response.kvs_size() > 0) outcome.value = response.kvs(0).value();
    return outcome;
  }

  Outcome SerialGet(const std::string& key) override { return Get(key); }

  Outcome CompareAndSet(const std::string& key, const std::optional<std::string>& expected,
                        const std::string& value) override {
    etcdserverpb::TxnRequest request;
    Compare& compare = *request.add_compare();
    compare.set_key(key);
    compare.set_result(Compare::EQUAL);
    if (expected) {
      compare.set_target(Compare::VALUE);
      compare.set_value(*expected);
    } else {
      compare.set_target(Compare::CREATE);
      compare.set_create_revision(0);
    }
    AddPut(request, key, value);
    return Txn(request);
  }

  Outcome InsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                            const std::string& value) override {
    return Txn(InsertOf(partition, clustering_keys, value));
  }
  void StartInsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                              const std::string& value, OutcomeDone done) override {
    auto call = std::make_shared<Call<etcdserverpb::TxnRequest, etcdserverpb::TxnResponse>>();
    call->request = InsertOf(partition, clustering_keys, value);
    stub_->async()->Txn(Deadline(call->context), &call->request, &call->response,
                        [call, done = std::move(done)](grpc::Status status) { done(TxnDone(status, call->response)); });
  }

 private:
  // What an asynchronous call keeps until its answer.
  template <typename Request, typename Response>
  struct Call {
    grpc::ClientContext context;
    Request request;
    Response response;
  };

  static etcdserverpb::PutRequest PutOf(const std::string& key, const std::string& value) {
    etcdserverpb::PutRequest request;
    request.set_key(key);
    request.set_value(value);
    return request;
  }

  static etcdserverpb::TxnRequest InsertOf(const std::string& partition, const std::vector<std::string>& clustering_keys,
                                           const std::string& value) {
    etcdserverpb::TxnRequest request;
    for (const std::string& clustering_key : clustering_keys) {
      Compare& compare = *request.add_compare();
      compare.set_key(RowKey(partition, clustering_key));
      compare.set_result(Compare::EQUAL);
      compare.set_target(Compare::CREATE);
      compare.set_create_revision(0);
      AddPut(request, RowKey(partition, clustering_key), value);
    }
    return request;
  }

  static grpc::ClientContext* Deadline(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + kRequestDeadline);
    return &context;
  }

  static void AddPut(etcdserverpb::TxnRequest& request, const std::string& key, const std::string& value) {
    etcdserverpb::PutRequest& put = *request.add_success()->mutable_request_put();
    put.set_key(key);
    put.set_value(value);
  }

  static Outcome Done(const grpc::Status& status) {
    Outcome outcome;
    outcome.ok = status.ok();
    if (!status.ok()) outcome.error = absl::StrCat("grpc ", status.error_code());
    return outcome;
  }

  static Outcome TxnDone(const grpc::Status& status, const etcdserverpb::TxnResponse& response) {
    Outcome outcome = Done(status);
    outcome.applied = outcome.ok && response.succeeded();
    return outcome;
  }

  Outcome Txn(const etcdserverpb::TxnRequest& request) {
    etcdserverpb::TxnResponse response;
    grpc::ClientContext context;
    return TxnDone(stub_->Txn(Deadline(context), request, &response), response);
  }

  const std::string name_ = "etcd";
  std::unique_ptr<etcdserverpb::KV::Stub> stub_;
};

}  // namespace

std::unique_ptr<BenchSystem> ConnectEtcd(const std::string& address) {
  return std::make_unique<EtcdSystem>(address);
}

}  // namespace charybdis::node
