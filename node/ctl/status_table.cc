#include "node/ctl/status_table.h"

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

// nodetool's state letters; a replacing node is joining, as in ScyllaDB.
char StateLetter(const std::string& state) {
  if (state == "normal") return 'N';
  if (state == "leaving") return 'L';
  return 'J';  // joining, replacing
}

std::string DatacenterSection(const std::string& datacenter, const std::vector<const Member*>& members,
                              const StatusResponse& view, const std::map<uint32_t, uint64_t>& loads) {
  std::string text = absl::StrCat("Datacenter: ", datacenter, "\n", std::string(12 + datacenter.size(), '='), "\n",
                                  "Status=Up/Down\n|/ State=Normal/Leaving/Joining\n");
  absl::StrAppend(&text, Row("--", "Address", "Load", "Tokens", "Owns (effective)", "Host ID", "Rack"));
  const std::set<uint32_t> up(view.up().begin(), view.up().end());
  std::map<uint32_t, int> tokens;
  for (const RingEntry& entry : view.ring()) tokens[entry.node()]++;
  for (const Member* member : members) {
    const uint32_t id = member->id();
    const auto state = view.member_state().find(id);
    const std::string code = absl::StrCat(up.count(id) ? "U" : "D",
                                          std::string(1, StateLetter(state == view.member_state().end() ? "" : state->second)));
    const auto load = loads.find(id);
    const auto owns = view.effective_ownership().find(id);
    const auto host = view.host_id().find(id);
    absl::StrAppend(&text, Row(code, member->internode_address(),
                                           load == loads.end() ? "?" : BytesText(load->second), absl::StrCat(tokens[id]),
                                           owns == view.effective_ownership().end() ? "?" : absl::StrFormat("%.1f%%", owns->second * 100),
                                           host == view.host_id().end() ? "?" : host->second, member->rack()));
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

std::string StatusTable(const std::vector<StatusAnswer>& answers) {
  const StatusResponse* view = nullptr;
  std::map<uint32_t, uint64_t> loads;
  for (const StatusAnswer& answer : answers) {
    if (!answer.status) continue;
    if (view == nullptr) view = &*answer.status;
    loads[answer.status->node_id()] = answer.status->load_bytes();
  }
  std::string text;
  if (view != nullptr) {
    std::map<std::string, std::vector<const Member*>> by_datacenter;
    for (const Member& member : view->member()) {
      const auto state = view->member_state().find(member.id());
      if (state != view->member_state().end() && state->second == "left") continue;
      by_datacenter[member.datacenter()].push_back(&member);
    }
    for (const auto& [datacenter, members] : by_datacenter) {
      absl::StrAppend(&text, DatacenterSection(datacenter, members, *view, loads), "\n");
    }
    absl::StrAppend(&text, "Topology version ", view->topology_version(), ", as node ", view->node_id(), " sees it.\n");
  }
  for (const StatusAnswer& answer : answers) {
    if (!answer.status) {
      absl::StrAppend(&text, answer.address, ": no answer (", answer.error, ")\n");
      continue;
    }
    const StatusResponse& status = *answer.status;
    absl::StrAppend(&text, "node ", status.node_id(), " at ", answer.address, ": ", status.shards(),
                    " shards; sees up: ", absl::StrJoin(status.up(), " "));
    if (status.blocked_size() > 0) absl::StrAppend(&text, "; drops traffic of: ", absl::StrJoin(status.blocked(), " "));
    absl::StrAppend(&text, "\n");
  }
  CHARYBDIS_ASSERT(!text.empty() || answers.empty());
  return text;
}

}  // namespace charybdis::node
