#include "sim/sim_buggify.h"

namespace charybdis::sim {

namespace {

uint64_t HashName(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a: fixed on every platform
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

}  // namespace

bool SimBuggify::Fires(std::string_view site) {
  if (!enabled_) return false;
  auto it = sites_.find(site);
  if (it == sites_.end()) {
    Site fresh;
    fresh.enabled = random_.Fork(HashName(site)).Chance(0.25);
    it = sites_.emplace(std::string(site), fresh).first;
  }
  if (!it->second.enabled || !random_.Chance(0.25)) return false;
  it->second.fired++;
  return true;
}

}  // namespace charybdis::sim
