#include "core/replica/stream_source.h"

#include <algorithm>

#include "core/data/storage_codec.h"
#include "core/data/token.h"
#include "core/env/assert.h"

namespace charybdis {

StoredRange StoredRangeOf(const std::string& table, Token start, Token end) {
  CHARYBDIS_ASSERT(start <= end);
  StoredRange range{storage_codec::TokenPrefix(table, start), storage_codec::TokenRangeEnd(table, end)};
  CHARYBDIS_ASSERT(range.begin < range.end);
  return range;
}

StoredRange PaxosStatesOf(const std::string& table) {
  std::string prefix = storage_codec::PaxosTablePrefix(table);
  std::string end = storage_codec::PrefixEnd(prefix);
  return StoredRange{std::move(prefix), std::move(end)};
}

bool IsPaxosKeyInRange(const std::string& key, const std::string& table, Token start, Token end) {
  const std::optional<std::string> partition = storage_codec::PartitionOfPaxosKey(key, table);
  if (!partition) return false;
  const Token token = TokenOf(*partition);
  return token >= start && token <= end;
}

void AnswerStreamRequest(ShardEnv& env, const Envelope& message, const StreamedPaxosView& paxos_view) {
  const StreamRequest& request = message.stream_request();
  const Address receiver{message.from_node(), message.from_shard()};
  Envelope reply;
  StreamChunk& chunk = *reply.mutable_stream_chunk();
  chunk.set_stream_id(request.stream_id());
  chunk.set_after_key(request.after_key());
  chunk.set_table(request.table());
  chunk.set_start_token(request.start_token());
  chunk.set_end_token(request.end_token());
  if (request.table().empty() || request.start_token() > request.end_token() || request.max_pairs() == 0 ||
      request.max_pairs() > kMaxStreamPairs) {
    return env.network->Send(receiver, std::move(reply));  // not ok: a sender bug, never served
  }
  if (request.paxos() && paxos_view == nullptr) {
    return env.network->Send(receiver, std::move(reply));  // not ok: asked again later
  }
  chunk.set_paxos(request.paxos());
  // Rows: the range's span of keys. Paxos states: the table's, of which a
  // chunk scans the next max_pairs and sends those of the range.
  const StoredRange range = request.paxos()
                                ? PaxosStatesOf(request.table())
                                : StoredRangeOf(request.table(), request.start_token(), request.end_token());
  // The first key after `after_key`: keys are unique, so after_key + 0x00.
  const std::string begin = request.after_key().empty() ? range.begin
                                                        : std::max(range.begin, request.after_key() + '\0');
  if (begin >= range.end) {
    chunk.set_ok(true);
    chunk.set_exhausted(true);
    if (request.paxos()) chunk.set_scanned_to(request.after_key());
    return env.network->Send(receiver, std::move(reply));
  }
  const uint32_t max_pairs = request.max_pairs();
  env.storage->Scan(begin, range.end, max_pairs,
                    [&env, receiver, max_pairs, request, paxos_view, reply = std::move(reply)](
                        absl::StatusOr<std::vector<KeyValue>> pairs) mutable {
                      StreamChunk& chunk = *reply.mutable_stream_chunk();
                      if (pairs.ok()) {
                        CHARYBDIS_ASSERT(pairs->size() <= max_pairs);
                        chunk.set_ok(true);
                        chunk.set_exhausted(pairs->size() < max_pairs);
                        if (request.paxos()) {
                          chunk.set_scanned_to(pairs->empty() ? request.after_key() : pairs->back().key);
                        }
                        for (KeyValue& pair : *pairs) {
                          // Not one of the range's: the receiver's check would refuse it.
                          if (request.paxos() && !IsPaxosKeyInRange(pair.key, request.table(), request.start_token(),
                                                                    request.end_token())) {
                            continue;
                          }
                          if (request.paxos()) {
                            std::optional<std::string> view = paxos_view(request.table(), pair.key, pair.value);
                            if (!view) continue;  // wholly below the purge floor
                            pair.value = *std::move(view);
                          }
                          StoredPair& sent = *chunk.add_pair();
                          sent.set_key(std::move(pair.key));
                          sent.set_value(std::move(pair.value));
                        }
                      }
                      env.network->Send(receiver, std::move(reply));
                    });
}

}  // namespace charybdis
