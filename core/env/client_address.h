#pragma once

#include "core/env/address.h"
#include "core/env/network.h"
#include "proto/messages.pb.h"

namespace charybdis {

// Who hears the answer to a client request: its sender, or, for a request
// another shard of this node forwarded, the shard the forward names.
inline Address ClientAddressOf(const Envelope& message) {
  const ClientRequest& request = message.client_request();
  return request.forwarded() ? Address{request.reply_node(), request.reply_shard()}
                             : Address{message.from_node(), message.from_shard()};
}

// Sends `response` to the client of request `request_id` at `client`.
inline void AnswerClient(Network& network, const Address& client, uint64_t request_id, ClientResponse response) {
  response.set_request_id(request_id);
  Envelope envelope;
  *envelope.mutable_client_response() = std::move(response);
  network.Send(client, std::move(envelope));
}

}  // namespace charybdis
