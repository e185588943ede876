#include "node/bench/bench_load.h"

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/telemetry/percentile.h"

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

namespace {

void Count(const Outcome& outcome, std::chrono::steady_clock::duration latency, LoadResult& result) {
  result.requests++;
  if (outcome.ok) {
    result.ok++;
    result.applied += outcome.applied;
    result.latencies_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(latency).count());
  } else {
    result.errors[outcome.error]++;
  }
}

}  // namespace

void Merge(const LoadResult& from, LoadResult& into) {
  into.requests += from.requests;
  into.ok += from.ok;
  into.applied += from.applied;
  for (const auto& [kind, count] : from.errors) into.errors[kind] += count;
  into.latencies_us.insert(into.latencies_us.end(), from.latencies_us.begin(), from.latencies_us.end());
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
      Count(outcome, Clock::now() - sent, mine);
      if (options.progress_every != 0 && (i + 1) % options.progress_every == 0) {
        std::cerr << "  " << options.label << ": " << (i + 1) << " requests\n";
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    Merge(mine, total);
  };
  std::vector<std::thread> clients;
  for (uint32_t client = 0; client < std::max<uint32_t>(options.clients, 1); client++) {
    clients.emplace_back(client_loop, client);
  }
  for (std::thread& client : clients) client.join();
  total.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return total;
}

LoadResult RunAsyncLoad(const LoadOptions& options, const AsyncRequestFunction& request) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const auto deadline = started + options.max_duration;
  const uint64_t in_flight_limit = std::max<uint32_t>(options.clients, 1);
  std::mutex mutex;  // guards what follows
  std::condition_variable answered;
  LoadResult total;
  uint64_t started_requests = 0;
  uint64_t in_flight = 0;
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    answered.wait_until(lock, deadline, [&] { return in_flight < in_flight_limit; });
    if (Clock::now() >= deadline || started_requests >= options.max_requests) break;
    const uint64_t i = started_requests++;
    in_flight++;
    lock.unlock();
    const auto sent = Clock::now();
    request(i, [&, sent](Outcome outcome) {
      const auto latency = Clock::now() - sent;
      std::lock_guard<std::mutex> guard(mutex);
      Count(outcome, latency, total);
      if (options.progress_every != 0 && total.requests % options.progress_every == 0) {
        std::cerr << "  " << options.label << ": " << total.requests << " requests\n";
      }
      in_flight--;
      answered.notify_one();
    });
    lock.lock();
  }
  answered.wait(lock, [&] { return in_flight == 0; });
  total.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return total;
}

LoadResult RunLockStep(uint32_t clients, uint64_t rounds, std::chrono::milliseconds max_duration,
                       const RequestFunction& first, const SecondStep& second) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const auto deadline = started + max_duration;
  uint64_t round = 0;
  bool stop = rounds == 0;
  // Runs once per phase, when every client has arrived: whether to go on
  // is decided there, so every client sees the same answer.
  auto phase_done = [&]() noexcept {
    if (++round >= 2 * rounds || Clock::now() >= deadline) stop = true;
  };
  const uint32_t threads_count = std::max<uint32_t>(clients, 1);
  std::barrier sync(static_cast<std::ptrdiff_t>(threads_count), phase_done);
  std::mutex mutex;  // guards `total`
  LoadResult total;
  auto client_loop = [&](uint32_t client) {
    LoadResult mine;
    for (uint64_t i = 0; !stop; i++) {
      const auto sent = Clock::now();
      const Outcome read = first(client, i);
      Clock::duration spent = Clock::now() - sent;
      sync.arrive_and_wait();
      Outcome outcome = read;
      if (read.ok) {
        const auto again = Clock::now();
        outcome = second(client, read);
        spent += Clock::now() - again;
      }
      Count(outcome, spent, mine);
      sync.arrive_and_wait();
    }
    std::lock_guard<std::mutex> lock(mutex);
    Merge(mine, total);
  };
  std::vector<std::thread> threads;
  for (uint32_t client = 0; client < threads_count; client++) threads.emplace_back(client_loop, client);
  for (std::thread& thread : threads) thread.join();
  total.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return total;
}

std::string IncompressibleValue(uint32_t bytes, uint64_t seed) {
  std::string value(bytes, ' ');
  uint64_t state = 0x9e3779b97f4a7c15ull ^ seed;
  for (char& c : value) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    c = static_cast<char>('!' + state % 90);
  }
  return value;
}

}  // namespace charybdis::node
