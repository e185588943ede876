#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace charybdis {

using NodeId = uint32_t;
using ShardId = uint32_t;

// Where a message goes: one shard of one node. Node ids start at 1.
struct Address {
  NodeId node = 0;
  ShardId shard = 0;

  auto operator<=>(const Address&) const = default;

  std::string ToString() const {
    return std::to_string(node) + "." + std::to_string(shard);
  }
};

}  // namespace charybdis
