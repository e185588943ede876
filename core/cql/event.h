#pragma once

// The EVENTs a connection REGISTERs for (section 4.2.6), built once by
// whoever saw the change and pushed to every registered connection.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/cql/schema_change.h"

namespace charybdis::cql {

struct Event {
  std::string type;  // STATUS_CHANGE, TOPOLOGY_CHANGE or SCHEMA_CHANGE
  std::string body;  // what follows the type in the EVENT's body
};

// STATUS_CHANGE ("UP" or "DOWN") or TOPOLOGY_CHANGE ("NEW_NODE",
// "REMOVED_NODE") of the node at `address` (4 or 16 bytes) and `port`.
Event NodeEvent(std::string type, std::string_view change, std::string_view address, int32_t port);
Event SchemaEvent(const SchemaChange& change);

}  // namespace charybdis::cql
