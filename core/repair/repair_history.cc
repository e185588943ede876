#include "core/repair/repair_history.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/data/big_endian.h"
#include "core/data/checked_value.h"
#include "core/data/span_key.h"
#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis::repair {

namespace {

constexpr Nanos kRetryLoad = 1 * kSecond;

struct Parsed {
  std::string table;
  topology::TokenSpan span;
  RepairHistory::Repaired repaired;
};

std::string KeyOf(const std::string& table, topology::TokenSpan span) {
  return SpanKey(RepairHistory::kKeyPrefix, table, span.first, span.last);
}

std::optional<Parsed> Parse(const KeyValue& stored) {
  const std::optional<std::string_view> payload = checked_value::Open(stored.key, stored.value);
  const std::optional<SpanKeyParts> key = ParseSpanKey(RepairHistory::kKeyPrefix, stored.key);
  if (!payload || payload->size() != 16 || !key) return std::nullopt;
  Parsed parsed;
  parsed.table = key->table;
  parsed.span = {key->first, key->last};
  parsed.repaired.began_us = static_cast<Timestamp>(ReadBigEndian(*payload, 8));
  parsed.repaired.topology_version = ReadBigEndian(payload->substr(8), 8);
  return parsed;
}

}  // namespace

void RepairHistory::Start(std::function<void()> loaded) {
  const std::string prefix(kKeyPrefix);
  env_.storage->Scan(prefix, storage_codec::PrefixEnd(prefix), SIZE_MAX,
                     [this, loaded = std::move(loaded)](absl::StatusOr<std::vector<KeyValue>> stored) {
                       if (!stored.ok()) {
                         env_.clock->After(kRetryLoad, [this, loaded] { Start(loaded); });
                         return;
                       }
                       for (const KeyValue& entry : *stored) {
                         // A corrupt entry counts as no repair: nothing is
                         // purged by it.
                         std::optional<Parsed> parsed = Parse(entry);
                         if (!parsed) continue;
                         tables_[parsed->table][{parsed->span.last, parsed->span.first}] = parsed->repaired;
                       }
                       loaded_ = true;
                       loaded();
                     });
}

RepairHistory::Repaired RepairHistory::RepairedAt(const std::string& table, Token token) const {
  Repaired newest;
  auto spans = tables_.find(table);
  if (!loaded_ || spans == tables_.end()) return newest;
  ForEachSpanHolding(spans->second, token, [&newest](const Repaired& held) {
    if (held.began_us > newest.began_us) newest = held;
  });
  return newest;
}

void RepairHistory::Record(const std::string& table, topology::TokenSpan span, Repaired repaired,
                           std::function<void(absl::Status)> done) {
  CHARYBDIS_ASSERT(loaded_ && span.first <= span.last && repaired.began_us > 0);
  // Never back: a record that came late (or from a clock behind) keeps
  // the newer one, on disk as in memory.
  auto known = tables_[table].find({span.last, span.first});
  if (known != tables_[table].end() && known->second.began_us > repaired.began_us) repaired = known->second;
  WriteBatch batch;
  std::string payload;
  AppendBigEndian(payload, static_cast<uint64_t>(repaired.began_us), 8);
  AppendBigEndian(payload, repaired.topology_version, 8);
  const std::string key = KeyOf(table, span);
  batch.Put(key, checked_value::Seal(key, payload));
  // Spans inside this one that an older repair covered say nothing more.
  const std::vector<std::pair<Token, Token>> covered = SpansInside(
      tables_[table], span.first, span.last, [&repaired](const Repaired& older) { return older.began_us <= repaired.began_us; });
  for (const auto& [last, first] : covered) batch.Delete(KeyOf(table, {first, last}));
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [this, table, span, repaired, covered, done = std::move(done)](absl::Status status) {
                        if (status.ok()) {
                          Spans& spans = tables_[table];
                          Repaired& entry = spans[{span.last, span.first}];
                          if (repaired.began_us >= entry.began_us) entry = repaired;
                          for (const auto& bounds : covered) spans.erase(bounds);
                        }
                        done(status);
                      });
}

void RepairHistory::OnRecord(const Envelope& message) {
  const RepairRecord& record = message.repair_record();
  if (!loaded_) {
    // Just restarted: the repair stops and says so (run it again).
    Envelope refusal;
    refusal.mutable_repair_record_ack()->set_request_id(record.request_id());
    return env_.network->Send(Address{message.from_node(), message.from_shard()}, std::move(refusal));
  }
  Record(record.table(), {record.first_token(), record.last_token()},
         Repaired{record.began_us(), record.topology_version()},
         [this, sender = Address{message.from_node(), message.from_shard()},
          request_id = record.request_id()](absl::Status status) {
           Envelope reply;
           reply.mutable_repair_record_ack()->set_request_id(request_id);
           reply.mutable_repair_record_ack()->set_ok(status.ok());
           env_.network->Send(sender, std::move(reply));
         });
}

}  // namespace charybdis::repair
