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

namespace {

// The Paxos states of the table's partitions in the request's range: its
// Paxos keys are ordered by partition key, not token, so a chunk scans the
// next max_pairs of them and keeps those in the range.
void AnswerPaxosStreamRequest(ShardEnv& env, const Address& receiver, const StreamRequest& request, Envelope reply) {
  const std::string prefix = storage_codec::PaxosTablePrefix(request.table());
  const std::string end = storage_codec::PrefixEnd(prefix);
  const std::string begin = request.after_key().empty() ? prefix : std::max(prefix, request.after_key() + '\0');
  const uint32_t max_pairs = request.max_pairs();
  env.storage->Scan(begin, end, max_pairs,
                    [&env, receiver, max_pairs, request, reply = std::move(reply)](
                        absl::StatusOr<std::vector<KeyValue>> pairs) mutable {
                      StreamChunk& chunk = *reply.mutable_stream_chunk();
                      if (pairs.ok()) {
                        CHARYBDIS_ASSERT(pairs->size() <= max_pairs);
                        chunk.set_ok(true);
                        chunk.set_exhausted(pairs->size() < max_pairs);
                        chunk.set_scanned_to(pairs->empty() ? request.after_key() : pairs->back().key);
                        for (KeyValue& pair : *pairs) {
                          const std::optional<std::string> partition =
                              storage_codec::PartitionOfPaxosKey(pair.key, request.table());
                          if (!partition) continue;  // not a Paxos key: the receiver's check would refuse it
                          const Token token = TokenOf(*partition);
                          if (token < request.start_token() || token > request.end_token()) continue;
                          StoredPair& sent = *chunk.add_pair();
                          sent.set_key(std::move(pair.key));
                          sent.set_value(std::move(pair.value));
                        }
                      }
                      env.network->Send(receiver, std::move(reply));
                    });
}

}  // namespace

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
  chunk.set_paxos(request.paxos());
  if (request.paxos()) return AnswerPaxosStreamRequest(env, receiver, request, std::move(reply));
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
