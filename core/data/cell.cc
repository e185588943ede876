#include "core/data/cell.h"

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

}  // namespace charybdis
