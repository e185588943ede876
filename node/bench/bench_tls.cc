#include "node/bench/bench_tls.h"

#include <chrono>
#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/telemetry/percentile.h"

namespace charybdis::node {

namespace {

// `count` puts one after another; their latencies (us) appended to `into`,
// failures counted.
void PutRound(BenchSystem& system, uint32_t round, uint32_t count, const std::string& value,
              std::vector<int64_t>& into, uint64_t& failed) {
  for (uint32_t i = 0; i < count; i++) {
    const auto started = std::chrono::steady_clock::now();
    const Outcome outcome = system.Put(absl::StrCat("tls-", round, "-", i), value);
    const auto took = std::chrono::steady_clock::now() - started;
    if (!outcome.ok) {
      failed++;
      continue;
    }
    into.push_back(std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  }
}

}  // namespace

Comparison RunTlsComparison(BenchSystem& with_tls, BenchSystem& without_tls, const TlsSizes& sizes) {
  const std::string value(sizes.value_bytes, 'v');
  std::vector<int64_t> tls_us, clear_us;
  uint64_t tls_failed = 0, clear_failed = 0;
  for (uint32_t round = 0; round < sizes.rounds; round++) {
    // Who goes first alternates: neither always meets a machine warmed
    // (or disturbed) by the other.
    if (round % 2 == 0) {
      PutRound(with_tls, round, sizes.puts_per_round, value, tls_us, tls_failed);
      PutRound(without_tls, round, sizes.puts_per_round, value, clear_us, clear_failed);
    } else {
      PutRound(without_tls, round, sizes.puts_per_round, value, clear_us, clear_failed);
      PutRound(with_tls, round, sizes.puts_per_round, value, tls_us, tls_failed);
    }
    std::cerr << "  t. round " << round + 1 << " of " << sizes.rounds << "\n";
  }
  if (tls_failed + clear_failed > 0) {
    std::cerr << "  t. failed puts: " << tls_failed << " with TLS, " << clear_failed << " without\n";
  }
  Comparison comparison;
  comparison.title = "t. QUORUM put p50 through CQL, TLS on clients and between nodes";
  comparison.unit = "us";
  comparison.ours = tls_us.empty() ? 0 : static_cast<double>(Percentile(tls_us, 50));
  comparison.theirs = clear_us.empty() ? 0 : static_cast<double>(Percentile(clear_us, 50));
  comparison.theirs_name = "charybdis without TLS";
  comparison.goal = 1.15;
  return comparison;
}

}  // namespace charybdis::node
