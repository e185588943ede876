// The kv workload's draws (core/workload/kv_model.h), shared by the
// simulator and real runs: with fresh keys (key_count 0), a client that
// wrote nothing yet has nothing to read, so whatever it draws it writes a
// fresh key first; after that its reads go to keys it wrote.

#include "core/workload/kv_model.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace charybdis {
namespace {

TEST(KvModelTest, WithFreshKeysAClientWritesBeforeItReadsAndReadsWhatItWrote) {
  scenario::KvWorkload spec;
  spec.set_clients(1);
  spec.set_key_count(0);
  spec.set_read_fraction(1.0);  // every draw a read
  spec.add_write_consistency(CL_QUORUM);
  spec.add_read_consistency(CL_QUORUM);
  KvClientMemory memory;
  Random random(7);
  const KvOperation first = NextKvOperation(spec, "w", memory, random);
  EXPECT_EQ(first.function, HistoryOp::Function::kWrite) << "a read of a key nobody wrote";
  EXPECT_EQ(first.key, "w-0-0");
  EXPECT_EQ(first.consistency, CL_QUORUM);
  memory.written.push_back(first.key);
  for (int i = 0; i < 20; i++) {
    const KvOperation next = NextKvOperation(spec, "w", memory, random);
    EXPECT_EQ(next.function, HistoryOp::Function::kRead);
    EXPECT_EQ(next.key, first.key);
  }
}

}  // namespace
}  // namespace charybdis
