#include "sim/health_log.h"

#include "core/env/assert.h"

namespace charybdis::sim {

void HealthLog::Open(NodeId node, Cause cause, Nanos from) {
  if (open_.count({node, cause})) return;  // already unwell for this cause
  std::vector<Spell>& spells = spells_[node];
  open_[{node, cause}] = spells.size();
  spells.push_back(Spell{from, kOpen});
}

void HealthLog::Close(NodeId node, Cause cause, Nanos at) {
  auto it = open_.find({node, cause});
  if (it == open_.end()) return;
  Spell& spell = spells_[node][it->second];
  CHARYBDIS_ASSERT(spell.until == kOpen);
  CHARYBDIS_ASSERT(at >= spell.from);
  spell.until = at;
  open_.erase(it);
}

void HealthLog::Add(NodeId node, Nanos from, Nanos until) {
  CHARYBDIS_ASSERT(from <= until);
  spells_[node].push_back(Spell{from, until});
}

bool HealthLog::WellThroughout(NodeId node, Nanos from, Nanos to, Nanos recovery) const {
  CHARYBDIS_ASSERT(from <= to);
  CHARYBDIS_ASSERT(recovery >= 0);
  auto it = spells_.find(node);
  if (it == spells_.end()) return true;
  for (const Spell& spell : it->second) {
    const Nanos recovered = spell.until == kOpen ? kOpen : spell.until + recovery;
    if (spell.from <= to && recovered > from) return false;
  }
  return true;
}

}  // namespace charybdis::sim
