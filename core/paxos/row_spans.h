#pragma once

#include <vector>

#include "proto/messages.pb.h"

namespace charybdis {

// The rows a Paxos prepare names (PaxosPrepare.read_rows): spans of
// clustering keys, first and last included. A proposer sends them sorted
// and disjoint; an acceptor reads them in that order, which is key order.

// `spans` sorted by their first row, overlapping ones merged: the same
// rows, each span after the one before it.
std::vector<RowSpan> SortedDisjoint(std::vector<RowSpan> spans);

// Whether every span runs forwards and starts after the one before ends.
bool IsSortedAndDisjoint(const google::protobuf::RepeatedPtrField<RowSpan>& spans);

}  // namespace charybdis
