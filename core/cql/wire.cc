#include "core/cql/wire.h"

#include "absl/strings/str_cat.h"
#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis::cql {

FrameHeader ParseHeader(std::string_view bytes) {
  CHARYBDIS_ASSERT(bytes.size() >= kHeaderBytes);
  FrameHeader header;
  const uint8_t version = static_cast<uint8_t>(bytes[0]);
  header.version = version & 0x7F;
  header.response = (version & kResponseFlag) != 0;
  header.flags = static_cast<uint8_t>(bytes[1]);
  header.stream = static_cast<int16_t>(ReadBigEndian(bytes.substr(2), 2));
  header.opcode = static_cast<uint8_t>(bytes[4]);
  header.body_bytes = static_cast<uint32_t>(ReadBigEndian(bytes.substr(5), 4));
  return header;
}

std::string EncodeFrame(const FrameHeader& header, std::string_view body) {
  std::string frame;
  frame.reserve(kHeaderBytes + body.size());
  frame.push_back(static_cast<char>(header.version | (header.response ? kResponseFlag : 0)));
  frame.push_back(static_cast<char>(header.flags));
  AppendBigEndian(frame, static_cast<uint16_t>(header.stream), 2);
  frame.push_back(static_cast<char>(header.opcode));
  AppendBigEndian(frame, body.size(), 4);
  frame.append(body);
  CHARYBDIS_ASSERT(frame.size() == kHeaderBytes + body.size());
  return frame;
}

std::string_view Reader::Take(size_t count) {
  if (!ok_ || rest_.size() < count) {
    ok_ = false;
    return {};
  }
  std::string_view taken = rest_.substr(0, count);
  rest_.remove_prefix(count);
  CHARYBDIS_ASSERT(taken.size() == count);
  return taken;
}

uint8_t Reader::Byte() {
  std::string_view bytes = Take(1);
  CHARYBDIS_ASSERT(!ok_ || bytes.size() == 1);
  return ok_ ? static_cast<uint8_t>(bytes[0]) : 0;
}

uint16_t Reader::UnsignedShort() {
  std::string_view bytes = Take(2);
  CHARYBDIS_ASSERT(!ok_ || bytes.size() == 2);
  return ok_ ? static_cast<uint16_t>(ReadBigEndian(bytes, 2)) : 0;
}

int16_t Reader::Short() { return static_cast<int16_t>(UnsignedShort()); }

int32_t Reader::Int() {
  std::string_view bytes = Take(4);
  CHARYBDIS_ASSERT(!ok_ || bytes.size() == 4);
  return ok_ ? static_cast<int32_t>(ReadBigEndian(bytes, 4)) : 0;
}

int64_t Reader::Long() {
  std::string_view bytes = Take(8);
  CHARYBDIS_ASSERT(!ok_ || bytes.size() == 8);
  return ok_ ? static_cast<int64_t>(ReadBigEndian(bytes, 8)) : 0;
}

std::string Reader::String() { return std::string(Take(UnsignedShort())); }

std::string Reader::LongString() {
  const int32_t length = Int();
  if (length < 0) ok_ = false;
  CHARYBDIS_ASSERT(!ok_ || length >= 0);
  return ok_ ? std::string(Take(length)) : std::string();
}

std::string Reader::ShortBytes() { return std::string(Take(UnsignedShort())); }

Value Reader::Bytes() {
  const int32_t length = Int();
  Value value;
  if (!ok_) return value;
  if (length == -2) {
    value.unset = true;
  } else if (length >= 0) {
    std::string_view bytes = Take(length);
    CHARYBDIS_ASSERT(!ok_ || bytes.size() == static_cast<size_t>(length));
    if (ok_) value.bytes = std::string(bytes);
  } else if (length != -1) {
    ok_ = false;
  }
  CHARYBDIS_ASSERT(!value.unset || !value.bytes.has_value());
  return value;
}

std::vector<std::string> Reader::StringList() {
  std::vector<std::string> values;
  const uint16_t count = UnsignedShort();
  for (uint16_t i = 0; i < count && ok_; i++) values.push_back(String());
  CHARYBDIS_ASSERT(values.size() <= count);
  return values;
}

std::map<std::string, std::string> Reader::StringMap() {
  std::map<std::string, std::string> values;
  const uint16_t count = UnsignedShort();
  for (uint16_t i = 0; i < count && ok_; i++) {
    std::string key = String();
    values[std::move(key)] = String();
  }
  CHARYBDIS_ASSERT(values.size() <= count);
  return values;
}

absl::Status Reader::Status(std::string_view what) const {
  if (ok_) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("malformed ", std::string(what), " body"));
}

void Writer::Short(uint16_t value) { AppendBigEndian(out_, value, 2); }
void Writer::Int(int32_t value) { AppendBigEndian(out_, static_cast<uint32_t>(value), 4); }
void Writer::Long(int64_t value) { AppendBigEndian(out_, static_cast<uint64_t>(value), 8); }

void Writer::String(std::string_view value) {
  // A [string] holds at most 65535 bytes: cut longer text (messages) at a
  // character boundary.
  if (value.size() > 0xFFFF) {
    size_t end = 0xFFFF;
    while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) end--;
    value = value.substr(0, end);
  }
  CHARYBDIS_ASSERT(value.size() <= 0xFFFF);  // its length fits the [short]
  Short(static_cast<uint16_t>(value.size()));
  out_.append(value);
}

void Writer::LongString(std::string_view value) {
  Int(static_cast<int32_t>(value.size()));
  out_.append(value);
}

void Writer::ShortBytes(std::string_view value) { String(value); }

void Writer::Bytes(const std::optional<std::string>& value) {
  if (!value) return Int(-1);
  Int(static_cast<int32_t>(value->size()));
  out_.append(*value);
}

void Writer::StringList(const std::vector<std::string>& values) {
  Short(static_cast<uint16_t>(values.size()));
  for (const std::string& value : values) String(value);
}

void Writer::StringMultimap(const std::map<std::string, std::vector<std::string>>& values) {
  Short(static_cast<uint16_t>(values.size()));
  for (const auto& [key, list] : values) {
    String(key);
    StringList(list);
  }
}

}  // namespace charybdis::cql
