#include "core/paxos/row_spans.h"

#include <algorithm>

#include "core/env/assert.h"

namespace charybdis {

std::vector<RowSpan> SortedDisjoint(std::vector<RowSpan> spans) {
  std::sort(spans.begin(), spans.end(), [](const RowSpan& a, const RowSpan& b) { return a.first() < b.first(); });
  std::vector<RowSpan> merged;
  for (RowSpan& span : spans) {
    if (!merged.empty() && span.first() <= merged.back().last()) {
      if (span.last() > merged.back().last()) merged.back().set_last(span.last());
      continue;
    }
    CHARYBDIS_ASSERT(merged.empty() || merged.back().last() < span.first());
    merged.push_back(std::move(span));
  }
  return merged;
}

bool IsSortedAndDisjoint(const google::protobuf::RepeatedPtrField<RowSpan>& spans) {
  for (int i = 0; i < spans.size(); i++) {
    if (spans[i].first() > spans[i].last()) return false;
    if (i > 0 && spans[i].first() <= spans[i - 1].last()) return false;
  }
  return true;
}

}  // namespace charybdis
