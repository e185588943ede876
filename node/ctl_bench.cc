#include "node/ctl_bench.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iostream>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/percentile.h"
#include "core/token.h"

namespace charybdis::node {

namespace {

ExecuteRequest BenchRequest(const BenchOptions& options, const std::string& key) {
  ExecuteRequest execute;
  ClientRequest& request = *execute.mutable_request();
  ColumnValue value;
  value.set_column("v");
  value.set_value(key);
  if (options.operation == "get") {
    ReadOp* read = request.mutable_read();
    read->set_table(options.table);
    read->set_partition_key(key);
    read->set_consistency(options.level);
  } else if (options.operation == "put") {
    WriteOp* write = request.mutable_write();
    write->set_table(options.table);
    write->set_partition_key(key);
    write->set_consistency(options.level);
    *write->add_put() = value;
  } else {
    CasStatement* statement = request.mutable_cas()->add_statement();
    statement->mutable_write()->set_table(options.table);
    statement->mutable_write()->set_partition_key(key);
    *statement->mutable_write()->add_put() = value;
    statement->set_if_not_exists(true);
    request.mutable_cas()->set_commit_consistency(options.level);
  }
  if (options.shard_aware) {
    execute.set_has_shard(true);
    execute.set_shard(ShardOf(TokenOf(key), options.shards));
  }
  return execute;
}

}  // namespace

uint64_t RunBench(Client::Stub& stub, const BenchOptions& options) {
  std::vector<int64_t> latencies_us;
  latencies_us.reserve(options.count);
  std::map<std::string, uint64_t> errors;
  uint64_t not_applied = 0;
  const auto started = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < options.count; i++) {
    const ExecuteRequest request = BenchRequest(options, absl::StrCat(options.key_prefix, i));
    ClientResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const auto sent = std::chrono::steady_clock::now();
    const grpc::Status status = stub.Execute(&context, request, &response);
    const auto latency = std::chrono::steady_clock::now() - sent;
    if (!status.ok()) {
      errors[absl::StrCat("grpc ", status.error_code())]++;
    } else if (response.code() != ClientResponse::OK) {
      errors[ClientResponse::Code_Name(response.code())]++;
    } else {
      latencies_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(latency).count());
      not_applied += options.operation == "cas" && !response.applied();
    }
    if ((i + 1) % 5000 == 0 && i + 1 < options.count) {
      std::cerr << "  " << (i + 1) << "/" << options.count << "\n";
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  uint64_t failed = 0;
  std::string error_text;
  for (const auto& [name, count] : errors) {
    failed += count;
    absl::StrAppend(&error_text, " ", name, "=", count);
  }
  std::cout << options.operation << " " << ConsistencyLevel_Name(options.level) << ": "
            << options.count << " requests, " << latencies_us.size() << " ok, " << failed
            << " failed" << error_text;
  if (options.operation == "cas") std::cout << ", " << not_applied << " not applied";
  std::cout << "; p50 " << Percentile(latencies_us, 50) << " us, p90 " << Percentile(latencies_us, 90)
            << " us, p99 " << Percentile(latencies_us, 99) << " us, max "
            << Percentile(latencies_us, 100) << " us; " << static_cast<int64_t>(options.count / seconds)
            << " ops/s\n";
  return failed;
}

}  // namespace charybdis::node
