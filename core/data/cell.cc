#include "core/data/cell.h"

#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis {

namespace {

template <typename T>
int Order(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareBytes(const std::string& a, const std::string& b) {
  // std::string compares chars, which may be signed: compare as unsigned.
  const size_t common = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < common; i++) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return Order(a.size(), b.size());
}

}  // namespace

int CompareForMerge(const Cell& a, const Cell& b) {
  if (int c = Order(a.timestamp, b.timestamp)) return c;
  if (a.tombstone != b.tombstone) return a.tombstone ? 1 : -1;
  if (a.tombstone) return 0;
  if (a.expiring() != b.expiring()) return a.expiring() ? 1 : -1;
  if (int c = Order(a.expiry, b.expiry)) return c;
  if (int c = CompareBytes(a.value, b.value)) return c;
  return Order(b.ttl_seconds, a.ttl_seconds);
}

std::string ElementCellName(std::string_view column, std::string_view path) {
  CHARYBDIS_ASSERT(!IsElementCell(column));
  std::string name(column);
  name.push_back(kPathSeparator);
  constexpr char kDigits[] = "0123456789abcdef";
  for (char byte : path) {
    name.push_back(kDigits[static_cast<unsigned char>(byte) >> 4]);
    name.push_back(kDigits[static_cast<unsigned char>(byte) & 0xf]);
  }
  return name;
}

std::string ElementsForm(const std::vector<std::pair<std::string, std::string>>& elements, bool with_paths) {
  std::string form;
  for (const auto& [path, value] : elements) {
    if (with_paths) {
      AppendBigEndian(form, path.size(), 4);
      form.append(path);
    }
    AppendBigEndian(form, value.size(), 4);
    form.append(value);
  }
  return form;
}

std::string ListElementPath(Timestamp position, uint64_t origin, uint64_t sequence) {
  std::string path;
  AppendBigEndian(path, static_cast<uint64_t>(position) ^ (uint64_t{1} << 63), 8);
  AppendBigEndian(path, origin, 8);
  AppendBigEndian(path, sequence, 8);
  CHARYBDIS_ASSERT(path.size() == 24);
  return path;
}

bool IsWellFormedCellName(std::string_view cell_name) {
  if (!IsElementCell(cell_name)) return true;
  const std::string_view hex = cell_name.substr(cell_name.find(kPathSeparator) + 1);
  if (hex.size() % 2 != 0) return false;
  for (char digit : hex) {
    if (!((digit >= '0' && digit <= '9') || (digit >= 'a' && digit <= 'f'))) return false;
  }
  return true;
}

std::string PathOfCell(std::string_view cell_name) {
  CHARYBDIS_ASSERT(IsElementCell(cell_name) && IsWellFormedCellName(cell_name));
  const std::string_view hex = cell_name.substr(cell_name.find(kPathSeparator) + 1);
  const auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string path;
  for (size_t i = 0; i < hex.size(); i += 2) path.push_back(static_cast<char>(digit(hex[i]) << 4 | digit(hex[i + 1])));
  return path;
}

}  // namespace charybdis
