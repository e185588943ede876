#pragma once

#include "core/env/address.h"
#include "proto/messages.pb.h"

namespace charybdis {

// Who hears the answer to a client request: its sender, or, for a request
// another shard of this node forwarded, the shard the forward names.
inline Address ClientAddressOf(const Envelope& message) {
  const ClientRequest& request = message.client_request();
  return request.forwarded() ? Address{request.reply_node(), request.reply_shard()}
                             : Address{message.from_node(), message.from_shard()};
}

}  // namespace charybdis
