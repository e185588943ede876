#include "node/bench/machine_floor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/telemetry/percentile.h"

namespace charybdis::node {
namespace {

constexpr size_t kPingBytes = 64;
constexpr size_t kRecordBytes = 200;

absl::Status ErrnoError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

// Moves exactly `bytes` through `fd` (read or write, by `move`).
template <typename Move>
bool MoveAll(int fd, char* buffer, size_t bytes, Move move) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t moved = move(fd, buffer + done, bytes - done);
    if (moved == 0) return false;  // the peer closed
    if (moved < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(moved);
  }
  return true;
}

bool ReadAll(int fd, char* buffer, size_t bytes) { return MoveAll(fd, buffer, bytes, ::read); }
bool WriteAll(int fd, char* buffer, size_t bytes) {
  return MoveAll(fd, buffer, bytes, [](int to, char* from, size_t n) { return ::write(to, from, n); });
}

// A listening loopback socket on a port of the kernel's choice.
absl::StatusOr<int> Listen(sockaddr_in& address) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return ErrnoError("socket");
  address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const absl::Status error = ErrnoError("loopback listen");
    ::close(listener);
    return error;
  }
  return listener;
}

void NoDelay(int fd) {
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

// One writer's samples: `syncs` records appended to a preallocated file.
absl::Status TimeSyncs(const std::string& path, uint32_t syncs, std::latch& start, std::vector<int64_t>& samples_us) {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) {
    start.count_down();
    return ErrnoError(absl::StrCat("open ", path));
  }
  absl::Status status;
  if (const int failed = ::posix_fallocate(fd, 0, static_cast<off_t>(syncs * kRecordBytes)); failed != 0) {
    errno = failed;
    status = ErrnoError(absl::StrCat("posix_fallocate ", path));
  }
  start.arrive_and_wait();  // every writer syncs at once, as replicas sharing a disk do
  std::vector<char> record(kRecordBytes, 'r');
  for (uint32_t i = 0; status.ok() && i < syncs; i++) {
    const auto began = std::chrono::steady_clock::now();
    if (::pwrite(fd, record.data(), record.size(), static_cast<off_t>(i * kRecordBytes)) !=
            static_cast<ssize_t>(record.size()) ||
        ::fdatasync(fd) != 0) {
      status = ErrnoError(absl::StrCat("write and fdatasync ", path));
      break;
    }
    samples_us.push_back(MicrosSince(began));
  }
  ::close(fd);
  return status;
}

}  // namespace

absl::StatusOr<int64_t> MeasureLoopbackRoundTripUs(uint32_t round_trips) {
  if (round_trips == 0) return absl::InvalidArgumentError("round_trips must be at least 1");
  sockaddr_in address;
  auto listener = Listen(address);
  if (!listener.ok()) return listener.status();
  std::thread echo([fd = *listener] {
    const int peer = ::accept(fd, nullptr, nullptr);
    if (peer < 0) return;
    NoDelay(peer);
    char buffer[kPingBytes];
    while (ReadAll(peer, buffer, sizeof(buffer)) && WriteAll(peer, buffer, sizeof(buffer))) {
    }
    ::close(peer);
  });
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  absl::Status status;
  std::vector<int64_t> samples_us;
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    status = ErrnoError("loopback connect");
    ::shutdown(*listener, SHUT_RDWR);  // wakes the echo thread's accept
  } else {
    NoDelay(client);
    char buffer[kPingBytes] = {};
    for (uint32_t i = 0; i < round_trips; i++) {
      const auto began = std::chrono::steady_clock::now();
      if (!WriteAll(client, buffer, sizeof(buffer)) || !ReadAll(client, buffer, sizeof(buffer))) {
        status = ErrnoError("loopback ping-pong");
        break;
      }
      samples_us.push_back(MicrosSince(began));
    }
  }
  if (client >= 0) ::close(client);  // ends the echo loop
  echo.join();
  ::close(*listener);
  if (!status.ok()) return status;
  return Percentile(samples_us, 50);
}

absl::StatusOr<int64_t> MeasureFdatasyncUs(const std::string& directory, uint32_t writers, uint32_t syncs_each) {
  if (writers == 0 || syncs_each == 0) return absl::InvalidArgumentError("writers and syncs_each must be at least 1");
  if (!std::filesystem::is_directory(directory)) return absl::NotFoundError(absl::StrCat(directory, " is no directory"));
  std::latch start(writers);
  std::vector<std::vector<int64_t>> samples_us(writers);
  std::vector<absl::Status> statuses(writers);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < writers; w++) {
    threads.emplace_back([&, w] {
      statuses[w] = TimeSyncs(absl::StrCat(directory, "/fdatasync-", w), syncs_each, start, samples_us[w]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<int64_t> all_us;
  for (uint32_t w = 0; w < writers; w++) {
    std::error_code ignored;
    std::filesystem::remove(absl::StrCat(directory, "/fdatasync-", w), ignored);
    if (!statuses[w].ok()) return statuses[w];
    all_us.insert(all_us.end(), samples_us[w].begin(), samples_us[w].end());
  }
  return Percentile(all_us, 50);
}

absl::StatusOr<double> MeasureSequentialWriteBytesPerSecond(const std::string& directory, uint64_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("bytes must be at least 1");
  const std::string path = absl::StrCat(directory, "/sequential-write");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(absl::StrCat("open ", path));
  // Not zeros: a filesystem may treat those specially.
  std::vector<char> block(1 << 20);
  for (size_t i = 0; i < block.size(); i++) block[i] = static_cast<char>(i * 131 + 7);
  absl::Status status;
  const auto began = std::chrono::steady_clock::now();
  for (uint64_t written = 0; written < bytes && status.ok();) {
    const size_t size = static_cast<size_t>(std::min<uint64_t>(block.size(), bytes - written));
    if (!WriteAll(fd, block.data(), size)) status = ErrnoError("sequential write");
    written += size;
  }
  if (status.ok() && ::fdatasync(fd) != 0) status = ErrnoError("fdatasync");
  const int64_t took_us = std::max<int64_t>(MicrosSince(began), 1);
  ::close(fd);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  if (!status.ok()) return status;
  return static_cast<double>(bytes) * 1e6 / static_cast<double>(took_us);
}

absl::StatusOr<MachineFloor> MeasureMachineFloor(const std::string& directory) {
  MachineFloor floor;
  floor.sync_writers = 3;
  auto round_trip = MeasureLoopbackRoundTripUs(2000);
  if (!round_trip.ok()) return round_trip.status();
  auto sync = MeasureFdatasyncUs(directory, floor.sync_writers, 300);
  if (!sync.ok()) return sync.status();
  floor.loopback_round_trip_us = *round_trip;
  floor.fdatasync_us = *sync;
  return floor;
}

}  // namespace charybdis::node
