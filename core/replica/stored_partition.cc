#include "core/replica/stored_partition.h"

#include "absl/strings/str_cat.h"
#include "core/data/storage_codec.h"
#include "core/data/tombstone_gc.h"

namespace charybdis {

absl::StatusOr<Partition> ServablePartition(const ShardEnv& env, ShardMetrics& metrics,
                                            absl::StatusOr<std::vector<KeyValue>> stored, Timestamp purge_before) {
  if (!stored.ok()) {
    metrics.database_failed_reads++;
    return stored.status();
  }
  storage_codec::Decoded decoded = storage_codec::DecodeScan(*stored);
  storage_codec::DropKeys(*env.storage, decoded.obsolete_keys);
  if (!decoded.corrupt_keys.empty()) {
    CHARYBDIS_PROBE(env.probes, "storage.corrupt_entry");
    metrics.database_failed_reads++;
    metrics.database_corrupt_entries += decoded.corrupt_keys.size();
    storage_codec::DropKeys(*env.storage, decoded.corrupt_keys);
    return absl::DataLossError(absl::StrCat(decoded.corrupt_keys.size(), " of ", stored->size(),
                                            " stored versions fail their checksum"));
  }
  metrics.database_total_reads++;
  DropPurgeable(decoded.partition, purge_before);
  return std::move(decoded.partition);
}

}  // namespace charybdis
