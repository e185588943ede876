#include "node/server/internode_frame.h"

#include <endian.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace charybdis::node {

namespace {

// "CHY" and the protocol version: a peer of another version is refused at
// its hello, not misread.
constexpr uint32_t kHelloMagic = 0x43485901;

void AppendUint32(uint32_t value, std::string& out) {
  const uint32_t little = htole32(value);
  out.append(reinterpret_cast<const char*>(&little), sizeof(little));
}

uint32_t LoadUint32(const char* bytes) {
  uint32_t little;
  std::memcpy(&little, bytes, sizeof(little));
  return le32toh(little);
}

}  // namespace

std::string EncodeHello(const InternodeHello& hello) {
  std::string bytes;
  AppendUint32(kHelloMagic, bytes);
  AppendUint32(hello.from_node, bytes);
  AppendUint32(hello.to_node, bytes);
  AppendUint32(hello.to_shard, bytes);
  return bytes;
}

std::optional<InternodeHello> DecodeHello(std::string_view bytes) {
  if (bytes.size() != kInternodeHelloBytes) return std::nullopt;
  if (LoadUint32(bytes.data()) != kHelloMagic) return std::nullopt;
  InternodeHello hello;
  hello.from_node = LoadUint32(bytes.data() + 4);
  hello.to_node = LoadUint32(bytes.data() + 8);
  hello.to_shard = LoadUint32(bytes.data() + 12);
  return hello;
}

bool AppendFrame(const Envelope& message, std::string& out) {
  const size_t length = message.ByteSizeLong();
  if (length > kMaxInternodeFrameBytes) return false;
  AppendUint32(static_cast<uint32_t>(length), out);
  const size_t start = out.size();
  out.resize(start + length);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data() + start));
  return true;
}

absl::Status TakeFrames(std::string& input, const std::function<void(const Envelope&)>& deliver) {
  size_t offset = 0;
  Envelope message;
  while (input.size() - offset >= 4) {
    const size_t length = LoadUint32(input.data() + offset);
    if (length > kMaxInternodeFrameBytes) {
      return absl::DataLossError(absl::StrCat("internode frame of ", length, " bytes"));
    }
    if (input.size() - offset - 4 < length) break;  // the rest comes later
    if (!message.ParseFromArray(input.data() + offset + 4, static_cast<int>(length))) {
      return absl::DataLossError("internode frame is not an Envelope");
    }
    offset += 4 + length;
    deliver(message);
  }
  input.erase(0, offset);
  return absl::OkStatus();
}

}  // namespace charybdis::node
