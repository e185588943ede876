#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace charybdis::checked_value {

// Every value a shard stores ends in an 8-byte checksum of its key and its
// bytes (LevelDB's block CRCs, TigerBeetle's checksummed sectors). A flipped
// bit, a write torn by a crash, or a write that landed under another key
// then reads as data loss, never as data: a replica does not serve bytes it
// cannot vouch for. The key is part of the sum because a misdirected write
// carries correct bytes to the wrong place.
std::string Seal(std::string_view key, std::string_view payload);

// The payload `Seal(key, payload)` stored, or nullopt when the stored bytes
// do not check out under this key.
std::optional<std::string_view> Open(std::string_view key, std::string_view stored);

}  // namespace charybdis::checked_value
