#include "sim/sim_password_hasher.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/env/assert.h"

namespace charybdis::sim {
namespace {

constexpr char kPrefix[] = "$sim$";

}  // namespace

SimPasswordHasher::SimPasswordHasher(Simulator& simulator, uint32_t host, Random random)
    : simulator_(simulator), host_(host), random_(std::move(random)) {
  decoy_hash_ = HashWith(absl::StrCat(absl::Hex(random_.Next(), absl::kZeroPad16)), "a decoy");
}

std::string SimPasswordHasher::HashWith(const std::string& salt, const std::string& password) {
  uint64_t mixed = Mix64(0x5a17);
  for (char c : salt + "\n" + password) mixed = Mix64(mixed ^ static_cast<unsigned char>(c));
  return absl::StrCat(kPrefix, salt, "$", absl::Hex(mixed, absl::kZeroPad16));
}

void SimPasswordHasher::After(Nanos delay, std::function<void()> fn) {
  CHARYBDIS_ASSERT(delay >= 0);
  simulator_.Schedule(simulator_.now() + delay, EventTag{EventKind::kClient, host_, 0, 0}, /*bound=*/false,
                      std::move(fn));
}

void SimPasswordHasher::Hash(std::string password, std::function<void(std::string)> done) {
  std::string hashed = HashWith(absl::StrCat(absl::Hex(random_.Next(), absl::kZeroPad16)), password);
  After(kHashTime, [done = std::move(done), hashed = std::move(hashed)] { done(hashed); });
}

void SimPasswordHasher::Verify(std::string password, std::string salted_hash, int64_t delay_ns,
                               std::function<void(bool)> done) {
  bool matches = false;
  if (salted_hash.rfind(kPrefix, 0) == 0) {
    const std::vector<std::string> parts = absl::StrSplit(salted_hash.substr(sizeof(kPrefix) - 1), '$');
    matches = parts.size() == 2 && HashWith(parts[0], password) == salted_hash;
  }
  After(delay_ns + kHashTime, [done = std::move(done), matches] { done(matches); });
}

}  // namespace charybdis::sim
