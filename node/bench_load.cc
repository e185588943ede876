#include "node/bench_load.h"

#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/percentile.h"

namespace charybdis::node {

int64_t LoadResult::p50_us() const { return Percentile(latencies_us, 50); }
int64_t LoadResult::p99_us() const { return Percentile(latencies_us, 99); }

std::string LoadResult::Summary() const {
  std::string errors_text;
  for (const auto& [kind, count] : errors) absl::StrAppend(&errors_text, errors_text.empty() ? " (" : " ", kind, "=", count);
  if (!errors_text.empty()) errors_text += ")";
  return absl::StrFormat("%d ok, %d failed%s, p50 %d us, p99 %d us, %.0f ops/s", ok, failed(), errors_text,
                         p50_us(), p99_us(), ok_per_second());
}

LoadResult RunLoad(const LoadOptions& options, const RequestFunction& request) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const auto deadline = started + options.max_duration;
  std::atomic<uint64_t> next{0};
  std::mutex mutex;  // guards `total`
  LoadResult total;
  auto client_loop = [&](uint32_t client) {
    LoadResult mine;
    for (uint64_t i; Clock::now() < deadline && (i = next.fetch_add(1)) < options.max_requests;) {
      const auto sent = Clock::now();
      const Outcome outcome = request(client, i);
      const auto latency = Clock::now() - sent;
      mine.requests++;
      if (outcome.ok) {
        mine.ok++;
        mine.applied += outcome.applied;
        mine.latencies_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(latency).count());
      } else {
        mine.errors[outcome.error]++;
      }
      if (options.progress_every != 0 && (i + 1) % options.progress_every == 0) {
        std::cerr << "  " << options.label << ": " << (i + 1) << " requests\n";
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    total.requests += mine.requests;
    total.ok += mine.ok;
    total.applied += mine.applied;
    for (const auto& [kind, count] : mine.errors) total.errors[kind] += count;
    total.latencies_us.insert(total.latencies_us.end(), mine.latencies_us.begin(), mine.latencies_us.end());
  };
  std::vector<std::thread> clients;
  for (uint32_t client = 0; client < std::max<uint32_t>(options.clients, 1); client++) {
    clients.emplace_back(client_loop, client);
  }
  for (std::thread& client : clients) client.join();
  total.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return total;
}

}  // namespace charybdis::node
