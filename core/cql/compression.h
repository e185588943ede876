#pragma once

// Frame compression of the native protocol (v4 spec, section 5): a
// client names an algorithm in STARTUP; from then on a frame whose flag
// 0x01 is set has its body compressed, in either direction. LZ4 bodies
// are the uncompressed length (a 4-byte big-endian int) then one LZ4
// block, as Cassandra writes them; Snappy bodies are one raw Snappy
// buffer. Both come from Debian's libraries (docs/dependencies.md).

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace charybdis::cql {

enum class Compression { kNone, kLz4, kSnappy };

// The flag of a frame whose body is compressed.
inline constexpr uint8_t kCompressedFlag = 0x01;

// The algorithms a server offers in SUPPORTED, in order of preference.
inline constexpr const char* kCompressionNames[] = {"lz4", "snappy"};

// The algorithm STARTUP's COMPRESSION option names ("" or "none": none),
// or nullopt for one we do not know.
std::optional<Compression> CompressionNamed(std::string_view name);

std::string Compress(Compression compression, std::string_view body);
// The body `compressed` holds, refused (InvalidArgument) when it is not
// a valid buffer of the algorithm or would exceed `max_bytes`.
absl::StatusOr<std::string> Decompress(Compression compression, std::string_view compressed, size_t max_bytes);

// A whole frame with its body compressed and its flag set; unchanged with
// kNone. What a connection sends once its client asked for compression.
std::string CompressFrame(Compression compression, std::string frame);

}  // namespace charybdis::cql
