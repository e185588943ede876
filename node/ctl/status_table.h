#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proto/node.pb.h"

namespace charybdis::node {

// One node's answer to ctl status: its Status, or why there was none.
struct StatusAnswer {
  std::string address;  // the client address asked
  std::optional<StatusResponse> status;
  std::string error;
};

// ctl status as nodetool status prints it: per datacenter, one line per
// member that has not left, "UN  address  load  tokens  owns  host id
// rack". The membership, ownership and who is up are the first answering
// node's view (nodetool's is the node it asks); a node's load is its own
// answer's ("?" without one). Then each answering node's view of who is
// up and whom it drops, and the nodes that did not answer.
std::string StatusTable(const std::vector<StatusAnswer>& answers);

// ctl ring as nodetool ring prints it: per datacenter, one line per vnode
// in token order, "address rack status state load owns token", from the
// same view as StatusTable.
std::string RingTable(const std::vector<StatusAnswer>& answers);

// "512 B", "12.50 KiB", "3.20 MiB", "1.07 GiB".
std::string BytesText(uint64_t bytes);

}  // namespace charybdis::node
