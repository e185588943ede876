#include "core/replica/stream_source.h"

#include <algorithm>

#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis {

StoredRange StoredRangeOf(const std::string& table, Token start, Token end) {
  CHARYBDIS_ASSERT(start <= end);
  StoredRange range{storage_codec::TokenPrefix(table, start), storage_codec::TokenRangeEnd(table, end)};
  CHARYBDIS_ASSERT(range.begin < range.end);
  return range;
}

void AnswerStreamRequest(ShardEnv& env, const Envelope& message) {
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
  const StoredRange range = StoredRangeOf(request.table(), request.start_token(), request.end_token());
  // The first key after `after_key`: keys are unique, so after_key + 0x00.
  const std::string begin = request.after_key().empty() ? range.begin
                                                        : std::max(range.begin, request.after_key() + '\0');
  if (begin >= range.end) {
    chunk.set_ok(true);
    chunk.set_exhausted(true);
    return env.network->Send(receiver, std::move(reply));
  }
  const uint32_t max_pairs = request.max_pairs();
  env.storage->Scan(begin, range.end, max_pairs,
                    [&env, receiver, max_pairs, reply = std::move(reply)](
                        absl::StatusOr<std::vector<KeyValue>> pairs) mutable {
                      StreamChunk& chunk = *reply.mutable_stream_chunk();
                      if (pairs.ok()) {
                        CHARYBDIS_ASSERT(pairs->size() <= max_pairs);
                        chunk.set_ok(true);
                        chunk.set_exhausted(pairs->size() < max_pairs);
                        for (KeyValue& pair : *pairs) {
                          StoredPair& sent = *chunk.add_pair();
                          sent.set_key(std::move(pair.key));
                          sent.set_value(std::move(pair.value));
                        }
                      }
                      env.network->Send(receiver, std::move(reply));
                    });
}

}  // namespace charybdis
