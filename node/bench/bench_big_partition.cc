#include "node/bench/bench_big_partition.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <iostream>
#include <numeric>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/big_endian.h"
#include "node/bench/cql_connection.h"

namespace charybdis::node {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kInsertRow[] = "INSERT INTO bench.rows (k, c, v) VALUES (?, ?, ?)";
constexpr char kSelectRows[] = "SELECT c FROM bench.rows WHERE k = ?";

double MillisecondsSince(Clock::time_point began) {
  return std::chrono::duration<double, std::milli>(Clock::now() - began).count();
}

// Row i's clustering key: big-endian, so rows sort as their numbers do.
std::string ClusteringKey(uint64_t i) {
  std::string key;
  AppendBigEndian(key, i, 8);
  return key;
}

absl::StatusOr<std::unique_ptr<CqlConnection>> Connect(const std::string& address) {
  auto connection = std::make_unique<CqlConnection>();
  const std::string problem = connection->Open(address, nullptr, {kInsertRow, kSelectRows});
  if (!problem.empty()) return absl::UnavailableError(problem);
  return connection;
}

// Writes rows [0, rows) of `partition`, `loaders` batches at once.
absl::Status Load(const std::string& address, const std::string& partition, uint64_t rows,
                  const BigPartitionSizes& sizes) {
  std::atomic<uint64_t> next_batch{0};
  std::atomic<bool> failed{false};
  const uint64_t batches = (rows + sizes.rows_per_batch - 1) / sizes.rows_per_batch;
  const std::string value(sizes.value_bytes, 'v');
  auto load = [&] {
    absl::StatusOr<std::unique_ptr<CqlConnection>> connection = Connect(address);
    if (!connection.ok()) return failed.store(true);
    for (uint64_t batch = next_batch++; batch < batches && !failed; batch = next_batch++) {
      std::vector<std::vector<std::string>> values;
      const uint64_t end = std::min(rows, (batch + 1) * sizes.rows_per_batch);
      for (uint64_t i = batch * sizes.rows_per_batch; i < end; i++) values.push_back({partition, ClusteringKey(i), value});
      if ((*connection)->Batch(kInsertRow, values, CL_QUORUM).first != cql::Opcode::kResult) failed = true;
      if (batches >= 10 && batch % (batches / 10) == 0) std::cerr << "  " << end << " rows of " << rows << "\n";
    }
  };
  std::vector<std::thread> loaders;
  for (uint32_t i = 0; i < sizes.loaders; i++) loaders.emplace_back(load);
  for (std::thread& loader : loaders) loader.join();
  if (failed) return absl::UnavailableError(absl::StrCat("loading partition ", partition, " failed"));
  return absl::OkStatus();
}

// Reads every page of `partition`, checking that the rows come back once
// each and in order; each page's time goes to `page_ms`. `before_page`
// runs before each page, given its index.
absl::Status PageThrough(CqlConnection& connection, const std::string& partition, uint64_t rows,
                         int32_t page_size, std::vector<double>& page_ms,
                         const std::function<absl::Status(size_t)>& before_page = nullptr) {
  CqlPaging paging{page_size, std::nullopt};
  uint64_t next_row = 0;
  do {
    if (before_page) {
      if (absl::Status before = before_page(page_ms.size()); !before.ok()) return before;
    }
    const Clock::time_point began = Clock::now();
    auto [opcode, body] = connection.Execute(kSelectRows, {partition}, CL_QUORUM, paging);
    page_ms.push_back(MillisecondsSince(began));
    cql::Reader in(body);
    if (opcode != cql::Opcode::kResult || in.Int() != 2) {
      return absl::InternalError(absl::StrCat("page ", page_ms.size(), " of ", partition, " failed"));
    }
    const CqlRowsHeader header = ReadRowsHeader(in);
    if (header.rows > page_size) return absl::InternalError("a page holds more rows than its size");
    for (int32_t i = 0; i < header.rows; i++) {
      if (in.Bytes().bytes != ClusteringKey(next_row)) {
        return absl::DataLossError(absl::StrCat(partition, ": row ", next_row, " is not where it belongs"));
      }
      next_row++;
    }
    if (!in.ok()) return absl::InternalError("a page could not be read");
    paging.paging_state = header.paging_state;
  } while (paging.paging_state);
  if (next_row != rows) return absl::DataLossError(absl::StrCat(partition, ": ", next_row, " rows of ", rows, " read"));
  return absl::OkStatus();
}

double Mean(std::vector<double>::const_iterator begin, std::vector<double>::const_iterator end) {
  return begin == end ? 0 : std::accumulate(begin, end, 0.0) / static_cast<double>(end - begin);
}

}  // namespace

double BigPartitionMeasures::first_pages_ms(uint32_t edge_pages) const {
  const size_t count = std::min<size_t>(edge_pages, page_ms.size());
  return Mean(page_ms.begin(), page_ms.begin() + count);
}

double BigPartitionMeasures::last_pages_ms(uint32_t edge_pages) const {
  // The very last page may hold fewer rows.
  const size_t full = page_ms.size() > 1 ? page_ms.size() - 1 : page_ms.size();
  const size_t count = std::min<size_t>(edge_pages, full);
  return Mean(page_ms.begin() + (full - count), page_ms.begin() + full);
}

absl::StatusOr<BigPartitionMeasures> RunBigPartition(const std::string& cql_address, const BigPartitionSizes& sizes) {
  BigPartitionMeasures measures;
  measures.rows = sizes.rows;
  const uint64_t small_rows = static_cast<uint64_t>(sizes.page_size);
  std::cerr << "bench: l. loading a partition of " << small_rows << " rows and one of " << sizes.rows << "\n";
  const Clock::time_point began = Clock::now();
  if (absl::Status loaded = Load(cql_address, "small", small_rows, sizes); !loaded.ok()) return loaded;
  if (absl::Status loaded = Load(cql_address, "big", sizes.rows, sizes); !loaded.ok()) return loaded;
  measures.load_seconds = MillisecondsSince(began) / 1000;
  absl::StatusOr<std::unique_ptr<CqlConnection>> connection = Connect(cql_address);
  if (!connection.ok()) return connection.status();
  // The partition of one page is read whole (one page more than its rows)
  // right before each of the big one's first pages, so that both meet the
  // machine at the same moment (the load's compactions still run).
  std::vector<double> small_ms;
  auto read_small = [&](size_t page) -> absl::Status {
    if (page >= sizes.edge_pages) return absl::OkStatus();
    std::vector<double> pages;
    absl::Status read = PageThrough(**connection, "small", small_rows, sizes.page_size + 1, pages);
    small_ms.push_back(std::accumulate(pages.begin(), pages.end(), 0.0));
    return read;
  };
  std::cerr << "bench: l. paging through " << sizes.rows << " rows, " << sizes.page_size << " a page\n";
  if (absl::Status read = PageThrough(**connection, "big", sizes.rows, sizes.page_size, measures.page_ms, read_small);
      !read.ok()) {
    return read;
  }
  measures.small_partition_ms = Mean(small_ms.begin(), small_ms.end());
  std::cerr << absl::StrFormat("  %d pages: first %.1f ms, last %.1f ms a page (%d at each end)\n",
                               measures.page_ms.size(), measures.first_pages_ms(sizes.edge_pages),
                               measures.last_pages_ms(sizes.edge_pages), sizes.edge_pages);
  return measures;
}

std::vector<Comparison> BigPartitionComparisons(const BigPartitionMeasures& m, const BigPartitionSizes& sizes) {
  const std::string rows = m.rows >= 1'000'000 ? absl::StrCat(m.rows / 1'000'000, "M") : absl::StrCat(m.rows);
  return {
      Comparison{absl::StrFormat("l. first pages of a %s-row partition, %d rows a page", rows, sizes.page_size), "us",
                 1000 * m.first_pages_ms(sizes.edge_pages), 1000 * m.small_partition_ms, "a partition of one page",
                 /*lower_is_better=*/true, 1.5},
      Comparison{absl::StrFormat("l. last pages of a %s-row partition", rows), "us",
                 1000 * m.last_pages_ms(sizes.edge_pages), 1000 * m.first_pages_ms(sizes.edge_pages), "its first pages",
                 /*lower_is_better=*/true, 1.5},
  };
}

}  // namespace charybdis::node
