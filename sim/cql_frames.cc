#include "sim/cql_frames.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/cql/consistency_code.h"
#include "core/cql/wire.h"
#include "core/env/assert.h"

namespace charybdis::sim {

namespace {

// The protocol's ids of the types the workload uses (native protocol v4,
// section 4.2.5.2).
constexpr uint16_t kBigint = 0x0002;
constexpr uint16_t kBoolean = 0x0004;
constexpr uint16_t kInt = 0x0009;
constexpr uint16_t kVarchar = 0x000D;
constexpr uint16_t kAscii = 0x0001;

int64_t BigEndianSigned(const std::string& bytes) {
  uint64_t value = 0;
  for (char byte : bytes) value = (value << 8) | static_cast<uint8_t>(byte);
  // Sign-extend from the value's width.
  const int shift = 64 - 8 * static_cast<int>(bytes.size());
  return shift >= 64 ? 0 : static_cast<int64_t>(value << shift) >> shift;
}

constexpr uint16_t kSet = 0x0022;

// A column's [option]: its type, and a set's element type (0 for others).
struct ColumnType {
  uint16_t kind = 0;
  uint16_t element = 0;
};

// A value of a column of type `type`; false if the type is not one of ours.
bool DecodeValue(ColumnType type, const std::string& bytes, model::Value& value) {
  if (type.kind == kSet) {
    value = bytes;
    return type.element == kInt && IntSetElements(value).has_value();
  }
  switch (type.kind) {
    case kInt:
    case kBigint:
    case kBoolean:
      if (bytes.size() != (type.kind == kInt ? 4u : type.kind == kBigint ? 8u : 1u)) return false;
      value = BigEndianSigned(bytes);
      return true;
    case kVarchar:
    case kAscii:
      value = bytes;
      return true;
    default:
      return false;
  }
}

void DecodeRows(cql::Reader& in, CqlAnswer& answer) {
  const int32_t flags = in.Int();
  const int32_t count = in.Int();
  if (flags & 0x0002) answer.paging_state = in.Bytes().bytes;
  const bool global_table = flags & 0x0001;
  if (global_table) {
    in.String();
    in.String();
  }
  std::vector<ColumnType> types;
  for (int32_t i = 0; i < count && in.ok(); i++) {
    if (!global_table) {
      in.String();
      in.String();
    }
    answer.columns.push_back(in.String());
    ColumnType& type = types.emplace_back();
    type.kind = in.UnsignedShort();
    if (type.kind == kSet) type.element = in.UnsignedShort();
  }
  const int32_t rows = in.Int();
  for (int32_t r = 0; r < rows && in.ok(); r++) {
    std::vector<std::optional<model::Value>> row;
    for (ColumnType type : types) {
      const cql::Value bytes = in.Bytes();
      if (!bytes.bytes) {
        row.push_back(std::nullopt);
        continue;
      }
      model::Value value;
      if (!DecodeValue(type, *bytes.bytes, value)) {
        answer.malformed = absl::StrCat("a value of type ", type.kind, ", which the workload does not use");
        return;
      }
      row.push_back(std::move(value));
    }
    answer.rows.push_back(std::move(row));
  }
}

}  // namespace

std::optional<std::vector<model::Value>> IntSetElements(const model::Value& value) {
  const std::string* native = std::get_if<std::string>(&value);
  if (native == nullptr || native->size() < 4) return std::nullopt;
  const int64_t count = BigEndianSigned(native->substr(0, 4));
  // Each element: its length (4), then 4 bytes.
  if (count < 0 || native->size() != 4 + 8 * static_cast<size_t>(count)) return std::nullopt;
  std::vector<model::Value> elements;
  for (int64_t i = 0; i < count; i++) {
    const std::string element = native->substr(4 + 8 * i, 8);
    if (BigEndianSigned(element.substr(0, 4)) != 4) return std::nullopt;
    elements.push_back(BigEndianSigned(element.substr(4)));
  }
  return elements;
}

std::string StartupBody(cql::Compression compression) {
  std::map<std::string, std::string> options = {{"CQL_VERSION", "3.0.0"}};
  if (compression == cql::Compression::kLz4) options["COMPRESSION"] = "lz4";
  if (compression == cql::Compression::kSnappy) options["COMPRESSION"] = "snappy";
  cql::Writer startup;
  startup.Short(static_cast<uint16_t>(options.size()));
  for (const auto& [name, value] : options) {
    startup.String(name);
    startup.String(value);
  }
  return startup.Take();
}

std::string UncompressedFrame(cql::Compression compression, std::string frame) {
  if (frame.size() < cql::kHeaderBytes) return frame;
  cql::FrameHeader header = cql::ParseHeader(frame);
  if (!(header.flags & cql::kCompressedFlag) || compression == cql::Compression::kNone) return frame;
  absl::StatusOr<std::string> body =
      cql::Decompress(compression, std::string_view(frame).substr(cql::kHeaderBytes), cql::kMaxBodyBytes);
  if (!body.ok()) return frame;
  header.flags &= ~cql::kCompressedFlag;
  return cql::EncodeFrame(header, *body);
}

std::string AuthResponseBody(const std::string& role, const std::string& password) {
  cql::Writer out;
  out.Bytes(std::string(1, '\0') + role + std::string(1, '\0') + password);
  return out.Take();
}

namespace {

// <query_parameters> (section 4.1.4): no values.
void WriteParameters(cql::Writer& body, ConsistencyLevel level, ConsistencyLevel serial, int32_t page_size,
                     const std::optional<std::string>& paging_state) {
  body.Short(cql::ToCqlConsistency(level));
  body.Byte((page_size > 0 ? 0x04 : 0) | (paging_state ? 0x08 : 0) | (serial != CL_UNSET ? 0x10 : 0));
  if (page_size > 0) body.Int(page_size);
  if (paging_state) body.Bytes(*paging_state);
  if (serial != CL_UNSET) body.Short(cql::ToCqlConsistency(serial));
}

}  // namespace

std::string QueryBody(const std::string& text, ConsistencyLevel level, ConsistencyLevel serial, int32_t page_size,
                      const std::optional<std::string>& paging_state) {
  cql::Writer body;
  body.LongString(text);
  WriteParameters(body, level, serial, page_size, paging_state);
  return body.Take();
}

std::string PrepareBody(const std::string& text) {
  cql::Writer body;
  body.LongString(text);
  return body.Take();
}

std::string ExecuteBody(const std::string& id, ConsistencyLevel level, ConsistencyLevel serial, int32_t page_size,
                        const std::optional<std::string>& paging_state) {
  cql::Writer body;
  body.ShortBytes(id);
  WriteParameters(body, level, serial, page_size, paging_state);
  return body.Take();
}

CqlAnswer DecodeAnswer(const std::string& frame) {
  CqlAnswer answer;
  if (frame.size() < cql::kHeaderBytes) {
    answer.malformed = "a frame shorter than its header";
    return answer;
  }
  const cql::FrameHeader header = cql::ParseHeader(frame);
  if (header.flags & cql::kCompressedFlag) {
    answer.malformed = "a compressed body its client could not decompress, or compressed unasked";
    return answer;
  }
  cql::Reader in(std::string_view(frame).substr(cql::kHeaderBytes));
  if (header.opcode == static_cast<uint8_t>(cql::Opcode::kError)) {
    answer.kind = CqlAnswer::Kind::kError;
    answer.error_code = in.Int();
    answer.error_message = in.String();
  } else if (header.opcode == static_cast<uint8_t>(cql::Opcode::kResult)) {
    switch (in.Int()) {
      case 1: answer.kind = CqlAnswer::Kind::kVoid; break;
      case 2: answer.kind = CqlAnswer::Kind::kRows; DecodeRows(in, answer); break;
      case 3: answer.kind = CqlAnswer::Kind::kSetKeyspace; break;
      case 4:  // the id; its metadata is not read
        answer.kind = CqlAnswer::Kind::kPrepared;
        answer.prepared_id = in.ShortBytes();
        break;
      case 5: answer.kind = CqlAnswer::Kind::kSchemaChange; break;
      default: answer.malformed = "an unknown result kind"; break;
    }
  }
  if (!in.ok() && answer.malformed.empty()) answer.malformed = "a truncated answer";
  if (!answer.malformed.empty()) answer.kind = CqlAnswer::Kind::kOther;
  return answer;
}

std::string CqlLiteral(const model::Value& value) {
  if (const int64_t* number = std::get_if<int64_t>(&value)) return absl::StrCat(*number);
  return absl::StrCat("'", absl::StrReplaceAll(std::get<std::string>(value), {{"'", "''"}}), "'");
}

}  // namespace charybdis::sim
