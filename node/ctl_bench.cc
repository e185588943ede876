#include "node/ctl_bench.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>
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

// What one of the bench's clients saw.
struct BenchTally {
  std::vector<int64_t> latencies_us;
  std::map<std::string, uint64_t> errors;
  uint64_t not_applied = 0;
};

// One client: requests one at a time, taking the next key number from
// `next` until `count` are taken.
BenchTally RunClient(Client::Stub& stub, const BenchOptions& options, std::atomic<uint32_t>& next) {
  BenchTally tally;
  for (uint32_t i; (i = next.fetch_add(1)) < options.count;) {
    const ExecuteRequest request = BenchRequest(options, absl::StrCat(options.key_prefix, i));
    ClientResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const auto sent = std::chrono::steady_clock::now();
    const grpc::Status status = stub.Execute(&context, request, &response);
    const auto latency = std::chrono::steady_clock::now() - sent;
    if (!status.ok()) {
      tally.errors[absl::StrCat("grpc ", status.error_code())]++;
    } else if (response.code() != ClientResponse::OK) {
      tally.errors[ClientResponse::Code_Name(response.code())]++;
    } else {
      tally.latencies_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(latency).count());
      tally.not_applied += options.operation == "cas" && !response.applied();
    }
    if ((i + 1) % 5000 == 0 && i + 1 < options.count) {
      std::cerr << "  " << (i + 1) << "/" << options.count << "\n";
    }
  }
  return tally;
}

}  // namespace

uint64_t RunBench(Client::Stub& stub, const BenchOptions& options) {
  std::atomic<uint32_t> next{0};
  std::vector<BenchTally> tallies(std::max<uint32_t>(options.in_flight, 1));
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (BenchTally& tally : tallies) {
    clients.emplace_back([&] { tally = RunClient(stub, options, next); });
  }
  for (std::thread& client : clients) client.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  BenchTally total;
  for (const BenchTally& tally : tallies) {
    total.latencies_us.insert(total.latencies_us.end(), tally.latencies_us.begin(), tally.latencies_us.end());
    for (const auto& [name, count] : tally.errors) total.errors[name] += count;
    total.not_applied += tally.not_applied;
  }
  uint64_t failed = 0;
  std::string error_text;
  for (const auto& [name, count] : total.errors) {
    failed += count;
    absl::StrAppend(&error_text, " ", name, "=", count);
  }
  const std::vector<int64_t>& latencies_us = total.latencies_us;
  std::cout << options.operation << " " << ConsistencyLevel_Name(options.level) << ": "
            << options.count << " requests (" << tallies.size() << " in flight), "
            << latencies_us.size() << " ok, " << failed << " failed" << error_text;
  if (options.operation == "cas") std::cout << ", " << total.not_applied << " not applied";
  std::cout << "; p50 " << Percentile(latencies_us, 50) << " us, p90 " << Percentile(latencies_us, 90)
            << " us, p99 " << Percentile(latencies_us, 99) << " us, max "
            << Percentile(latencies_us, 100) << " us; " << static_cast<int64_t>(options.count / seconds)
            << " ops/s\n";
  return failed;
}

}  // namespace charybdis::node
