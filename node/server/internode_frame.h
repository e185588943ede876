#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/env/address.h"
#include "proto/messages.pb.h"

namespace charybdis::node {

// The internode wire format (docs/node.md). A connection carries messages
// one way, from one shard to one shard of a peer. It opens with a hello
// naming both ends, then carries frames: a 4-byte little-endian length and
// that many bytes of one serialized Envelope.
struct InternodeHello {
  NodeId from_node = 0;
  NodeId to_node = 0;
  ShardId to_shard = 0;
};

inline constexpr size_t kInternodeHelloBytes = 16;
// Far above any message we send (Paxos rounds cap at 4096 statements): a
// larger length means a broken or foreign peer.
inline constexpr size_t kMaxInternodeFrameBytes = size_t{256} << 20;

std::string EncodeHello(const InternodeHello& hello);
// Nothing unless `bytes` is a hello of this protocol version.
std::optional<InternodeHello> DecodeHello(std::string_view bytes);

// Appends one frame carrying `message` to `out`; false (and nothing
// appended) if it is over kMaxInternodeFrameBytes.
bool AppendFrame(const Envelope& message, std::string& out);

// Hands every complete frame at the front of `input` to `deliver`, in
// order, and removes them; a partial frame stays for the next read. An
// error (an oversized length, bytes that are no Envelope) means the
// connection must close.
absl::Status TakeFrames(std::string& input, const std::function<void(const Envelope&)>& deliver);

}  // namespace charybdis::node
