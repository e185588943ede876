#pragma once

#include "proto/node.grpc.pb.h"

namespace charybdis::node {

class Node;

// The client API over gRPC (callback API: no thread waits for a request).
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
  Node& node_;
};

}  // namespace charybdis::node
