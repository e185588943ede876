#pragma once

// The CQL native protocol's framing and notation (native_protocol_v4.spec,
// sections 2 and 3): a 9-byte frame header, then a body of [int], [short],
// [string], [bytes], ... in big-endian byte order. Pure: no sockets.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace charybdis::cql {

constexpr uint8_t kProtocolVersion = 4;
constexpr uint8_t kResponseFlag = 0x80;
constexpr size_t kHeaderBytes = 9;
// Cassandra 4's native_transport_max_frame_size: 16 MiB.
constexpr uint32_t kMaxBodyBytes = 16 << 20;

enum class Opcode : uint8_t {
  kError = 0x00,
  kStartup = 0x01,
  kReady = 0x02,
  kAuthenticate = 0x03,
  kOptions = 0x05,
  kSupported = 0x06,
  kQuery = 0x07,
  kResult = 0x08,
  kPrepare = 0x09,
  kExecute = 0x0A,
  kRegister = 0x0B,
  kEvent = 0x0C,
  kBatch = 0x0D,
  kAuthChallenge = 0x0E,
  kAuthResponse = 0x0F,
  kAuthSuccess = 0x10,
};

enum class ErrorCode : int32_t {
  kServer = 0x0000,
  kProtocol = 0x000A,
  kBadCredentials = 0x0100,
  kUnavailable = 0x1000,
  kOverloaded = 0x1001,
  kWriteTimeout = 0x1100,
  kReadTimeout = 0x1200,
  kReadFailure = 0x1300,
  kSyntax = 0x2000,
  kUnauthorized = 0x2100,
  kInvalid = 0x2200,
  kConfig = 0x2300,
  kAlreadyExists = 0x2400,
  kUnprepared = 0x2500,
};

struct FrameHeader {
  uint8_t version = kProtocolVersion;  // without the response bit
  bool response = false;
  uint8_t flags = 0;
  int16_t stream = 0;
  uint8_t opcode = 0;
  uint32_t body_bytes = 0;
};

// The header at the start of `bytes` (REQUIRES: at least kHeaderBytes).
FrameHeader ParseHeader(std::string_view bytes);
// A whole frame: header then body.
std::string EncodeFrame(const FrameHeader& header, std::string_view body);

// A value of the notation [bytes]: absent when null (length < 0). The
// protocol's "unset" (length -2) is kept apart from null.
struct Value {
  bool unset = false;
  std::optional<std::string> bytes;
};

// Reads a body. Every read past the end, or of a negative length where
// none is allowed, fails the reader; the caller checks ok() (or Status())
// once at the end, so that parsing code reads straight through.
class Reader {
 public:
  explicit Reader(std::string_view body) : rest_(body) {}

  uint8_t Byte();
  int16_t Short();
  uint16_t UnsignedShort();
  int32_t Int();
  int64_t Long();
  std::string String();      // [string]: a [short] length
  std::string LongString();  // [long string]: an [int] length
  std::string ShortBytes();  // [short bytes]
  Value Bytes();             // [bytes] / [value]
  std::vector<std::string> StringList();
  std::map<std::string, std::string> StringMap();

  bool ok() const { return ok_; }
  bool AtEnd() const { return rest_.empty(); }
  // InvalidArgument naming `what` when a read failed.
  absl::Status Status(std::string_view what) const;

 private:
  std::string_view Take(size_t count);

  std::string_view rest_;
  bool ok_ = true;
};

class Writer {
 public:
  void Byte(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void Short(uint16_t value);
  void Int(int32_t value);
  void Long(int64_t value);
  void String(std::string_view value);
  void LongString(std::string_view value);
  void ShortBytes(std::string_view value);
  void Bytes(const std::optional<std::string>& value);
  void StringList(const std::vector<std::string>& values);
  void StringMultimap(const std::map<std::string, std::vector<std::string>>& values);
  void Raw(std::string_view bytes) { out_.append(bytes); }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace charybdis::cql
