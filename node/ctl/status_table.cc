#include "node/ctl/status_table.h"

#include <cctype>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/env/assert.h"

namespace charybdis::node {

namespace {

// One line of the table: state, address, load, tokens, owns, host id, rack.
std::string Row(const std::string& state, const std::string& address, const std::string& load, const std::string& tokens,
                const std::string& owns, const std::string& host, const std::string& rack) {
  return absl::StrFormat("%-3s %-21s %-11s %-7s %-17s %-37s %s\n", state, address, load, tokens, owns, host, rack);
}

// "Datacenter: NAME" underlined, as nodetool heads each datacenter.
std::string DatacenterHeading(const std::string& datacenter) {
  return absl::StrCat("Datacenter: ", datacenter, "\n", std::string(12 + datacenter.size(), '='), "\n");
}

// A member's state in the view ("normal", "leaving", ...; empty if unknown).
std::string StateOf(const StatusResponse& view, uint32_t id) {
  const auto state = view.member_state().find(id);
  return state == view.member_state().end() ? "" : state->second;
}

// A node's load as it answered it, or "?" without an answer.
std::string LoadText(const std::map<uint32_t, uint64_t>& loads, uint32_t id) {
  const auto load = loads.find(id);
  return load == loads.end() ? "?" : BytesText(load->second);
}

// A node's effective ownership in the view, as a percentage.
std::string OwnsText(const StatusResponse& view, uint32_t id) {
  const auto owns = view.effective_ownership().find(id);
  return owns == view.effective_ownership().end() ? "?" : absl::StrFormat("%.1f%%", owns->second * 100);
}

// nodetool's state letters; a replacing node is joining, as in ScyllaDB.
char StateLetter(const std::string& state) {
  if (state == "normal") return 'N';
  if (state == "leaving") return 'L';
  return 'J';  // joining, replacing
}

std::string DatacenterSection(const std::string& datacenter, const std::vector<const Member*>& members,
                              const StatusResponse& view, const std::map<uint32_t, uint64_t>& loads) {
  std::string text = absl::StrCat(DatacenterHeading(datacenter), "Status=Up/Down\n|/ State=Normal/Leaving/Joining\n");
  absl::StrAppend(&text, Row("--", "Address", "Load", "Tokens", "Owns (effective)", "Host ID", "Rack"));
  const std::set<uint32_t> up(view.up().begin(), view.up().end());
  std::map<uint32_t, int> tokens;
  for (const RingEntry& entry : view.ring()) tokens[entry.node()]++;
  for (const Member* member : members) {
    const uint32_t id = member->id();
    const std::string code = absl::StrCat(up.count(id) ? "U" : "D", std::string(1, StateLetter(StateOf(view, id))));
    const auto host = view.host_id().find(id);
    absl::StrAppend(&text, Row(code, member->internode_address(), LoadText(loads, id), absl::StrCat(tokens[id]),
                               OwnsText(view, id), host == view.host_id().end() ? "?" : host->second, member->rack()));
  }
  return text;
}

// The first answer's view, and each answering node's own load.
const StatusResponse* ViewOf(const std::vector<StatusAnswer>& answers, std::map<uint32_t, uint64_t>& loads) {
  const StatusResponse* view = nullptr;
  for (const StatusAnswer& answer : answers) {
    if (!answer.status) continue;
    if (view == nullptr) view = &*answer.status;
    loads[answer.status->node_id()] = answer.status->load_bytes();
  }
  return view;
}

std::string Unanswered(const std::vector<StatusAnswer>& answers) {
  std::string text;
  for (const StatusAnswer& answer : answers) {
    if (!answer.status) absl::StrAppend(&text, answer.address, ": no answer (", answer.error, ")\n");
  }
  return text;
}

}  // namespace

std::string BytesText(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    unit++;
  }
  return absl::StrFormat("%.2f %s", value, units[unit]);
}

std::string RingTable(const std::vector<StatusAnswer>& answers) {
  std::map<uint32_t, uint64_t> loads;
  const StatusResponse* view = ViewOf(answers, loads);
  if (view == nullptr) return Unanswered(answers);
  std::map<uint32_t, const Member*> members;
  for (const Member& member : view->member()) members[member.id()] = &member;
  const std::set<uint32_t> up(view->up().begin(), view->up().end());
  std::map<std::string, std::string> by_datacenter;  // datacenter -> its lines
  for (const RingEntry& entry : view->ring()) {
    const auto member = members.find(entry.node());
    CHARYBDIS_ASSERT(member != members.end());  // a ring's nodes are members
    std::string state = StateOf(*view, entry.node());
    state = state.empty() ? "?" : absl::StrCat(std::string(1, static_cast<char>(std::toupper(state[0]))), state.substr(1));
    absl::StrAppend(&by_datacenter[member->second->datacenter()],
                    absl::StrFormat("%-21s %-7s %-6s %-9s %-11s %-9s %d\n", member->second->internode_address(),
                                    member->second->rack(), up.count(entry.node()) ? "Up" : "Down", state,
                                    LoadText(loads, entry.node()), OwnsText(*view, entry.node()), entry.token()));
  }
  std::string text;
  for (const auto& [datacenter, lines] : by_datacenter) {
    absl::StrAppend(&text, DatacenterHeading(datacenter),
                    absl::StrFormat("%-21s %-7s %-6s %-9s %-11s %-9s %s\n", "Address", "Rack", "Status", "State", "Load",
                                    "Owns", "Token"),
                    lines, "\n");
  }
  return text + Unanswered(answers);
}

std::string StatusTable(const std::vector<StatusAnswer>& answers) {
  std::map<uint32_t, uint64_t> loads;
  const StatusResponse* view = ViewOf(answers, loads);
  std::string text;
  if (view != nullptr) {
    std::map<std::string, std::vector<const Member*>> by_datacenter;
    for (const Member& member : view->member()) {
      if (StateOf(*view, member.id()) == "left") continue;
      by_datacenter[member.datacenter()].push_back(&member);
    }
    for (const auto& [datacenter, members] : by_datacenter) {
      absl::StrAppend(&text, DatacenterSection(datacenter, members, *view, loads), "\n");
    }
    absl::StrAppend(&text, "Topology version ", view->topology_version(), ", as node ", view->node_id(), " sees it.\n");
  }
  for (const StatusAnswer& answer : answers) {
    if (!answer.status) continue;
    const StatusResponse& status = *answer.status;
    absl::StrAppend(&text, "node ", status.node_id(), " at ", answer.address, ": ", status.shards(),
                    " shards; sees up: ", absl::StrJoin(status.up(), " "));
    if (status.blocked_size() > 0) absl::StrAppend(&text, "; drops traffic of: ", absl::StrJoin(status.blocked(), " "));
    if (status.cql_open_to_everyone()) {
      absl::StrAppend(&text, "; WARNING: its CQL port listens beyond loopback and asks for no password (docs/security.md)");
    }
    absl::StrAppend(&text, "\n");
  }
  absl::StrAppend(&text, Unanswered(answers));
  CHARYBDIS_ASSERT(!text.empty() || answers.empty());
  return text;
}

}  // namespace charybdis::node
