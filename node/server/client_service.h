#pragma once

#include <functional>

#include "node/server/client_api_auth.h"
#include "proto/node.grpc.pb.h"

namespace charybdis::node {

class Node;

// The client API over gRPC (callback API: no thread waits for a request).
// When the node asks for passwords, calls are checked first
// (Node::CheckClientCall): a request as the CQL statement doing the same
// would be, Block for superusers; Status and Metrics need no login.
class ClientService final : public Client::CallbackService {
 public:
  explicit ClientService(Node& node) : node_(node) {}

  grpc::ServerUnaryReactor* Execute(grpc::CallbackServerContext* context,
                                    const ExecuteRequest* request,
                                    ClientResponse* response) override;
  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* context,
                                   const StatusRequest* request,
                                   StatusResponse* response) override;
  grpc::ServerUnaryReactor* Block(grpc::CallbackServerContext* context,
                                  const BlockRequest* request, BlockResponse* response) override;
  grpc::ServerUnaryReactor* Metrics(grpc::CallbackServerContext* context,
                                    const MetricsRequest* request,
                                    MetricsResponse* response) override;

 private:
  // Runs `then` with the check's answer (OK at once when the node asks
  // for no password; `needs` is asked only otherwise).
  void Checked(grpc::CallbackServerContext* context, const std::function<CallNeeds()>& needs,
               std::function<void(grpc::Status)> then);

  Node& node_;
};

}  // namespace charybdis::node
