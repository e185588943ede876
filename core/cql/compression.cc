#include "core/cql/compression.h"

#include <lz4.h>
#include <snappy.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "core/cql/wire.h"
#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis::cql {

namespace {

constexpr size_t kLz4LengthBytes = 4;

std::string CompressLz4(std::string_view body) {
  CHARYBDIS_ASSERT(body.size() <= static_cast<size_t>(LZ4_MAX_INPUT_SIZE));  // frames are far smaller
  std::string out;
  AppendBigEndian(out, body.size(), kLz4LengthBytes);
  const int bound = LZ4_compressBound(static_cast<int>(body.size()));
  out.resize(kLz4LengthBytes + static_cast<size_t>(bound));
  const int written = LZ4_compress_default(body.data(), out.data() + kLz4LengthBytes, static_cast<int>(body.size()), bound);
  CHARYBDIS_ASSERT(written > 0);  // the bound always suffices
  out.resize(kLz4LengthBytes + static_cast<size_t>(written));
  return out;
}

absl::StatusOr<std::string> DecompressLz4(std::string_view compressed, size_t max_bytes) {
  if (compressed.size() < kLz4LengthBytes) return absl::InvalidArgumentError("an LZ4 body shorter than its length");
  const uint64_t length = ReadBigEndian(compressed, kLz4LengthBytes);
  if (length > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("an LZ4 body of ", length, " bytes uncompressed exceeds ", max_bytes));
  }
  compressed.remove_prefix(kLz4LengthBytes);
  // gocql sends an empty body as its length alone, with no block.
  if (length == 0) return std::string();
  std::string body(length, '\0');
  const int read = LZ4_decompress_safe(compressed.data(), body.data(), static_cast<int>(compressed.size()),
                                       static_cast<int>(length));
  if (read < 0 || static_cast<uint64_t>(read) != length) return absl::InvalidArgumentError("a malformed LZ4 body");
  return body;
}

absl::StatusOr<std::string> DecompressSnappy(std::string_view compressed, size_t max_bytes) {
  size_t length = 0;
  if (!snappy::GetUncompressedLength(compressed.data(), compressed.size(), &length)) {
    return absl::InvalidArgumentError("a malformed Snappy body");
  }
  if (length > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("a Snappy body of ", length, " bytes uncompressed exceeds ", max_bytes));
  }
  std::string body;
  if (!snappy::Uncompress(compressed.data(), compressed.size(), &body)) {
    return absl::InvalidArgumentError("a malformed Snappy body");
  }
  CHARYBDIS_ASSERT(body.size() == length);
  return body;
}

}  // namespace

std::optional<Compression> CompressionNamed(std::string_view name) {
  if (name.empty() || name == "none") return Compression::kNone;
  if (name == "lz4") return Compression::kLz4;
  if (name == "snappy") return Compression::kSnappy;
  return std::nullopt;
}

std::string Compress(Compression compression, std::string_view body) {
  switch (compression) {
    case Compression::kNone: return std::string(body);
    case Compression::kLz4: return CompressLz4(body);
    case Compression::kSnappy: {
      std::string out;
      snappy::Compress(body.data(), body.size(), &out);
      return out;
    }
  }
  CHARYBDIS_ASSERT(false);  // every algorithm is handled above
  return {};
}

absl::StatusOr<std::string> Decompress(Compression compression, std::string_view compressed, size_t max_bytes) {
  switch (compression) {
    case Compression::kNone: return std::string(compressed);
    case Compression::kLz4: return DecompressLz4(compressed, max_bytes);
    case Compression::kSnappy: return DecompressSnappy(compressed, max_bytes);
  }
  CHARYBDIS_ASSERT(false);  // every algorithm is handled above
  return absl::InternalError("no such compression");
}

std::string CompressFrame(Compression compression, std::string frame) {
  if (compression == Compression::kNone) return frame;
  CHARYBDIS_ASSERT(frame.size() >= kHeaderBytes);
  FrameHeader header = ParseHeader(frame);
  CHARYBDIS_ASSERT(!(header.flags & kCompressedFlag));  // compressed once
  CHARYBDIS_ASSERT(header.body_bytes == frame.size() - kHeaderBytes);
  header.flags |= kCompressedFlag;
  return EncodeFrame(header, Compress(compression, std::string_view(frame).substr(kHeaderBytes)));
}

}  // namespace charybdis::cql
