#include "node/server/client_service.h"

#include "core/cql/system_auth_guard.h"
#include "node/server/node.h"

namespace charybdis::node {

grpc::ServerUnaryReactor* ClientService::Execute(grpc::CallbackServerContext* context,
                                                 const ExecuteRequest* request,
                                                 ClientResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (std::optional<std::string> refused = cql::SystemTableRefusal(request->request())) {
    response->set_request_id(request->request().request_id());
    response->set_code(ClientResponse::INVALID_REQUEST);
    response->set_message(*refused);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  node_.Execute(*request, [reactor, response](ClientResponse answer) {
    *response = std::move(answer);
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ClientService::Status(grpc::CallbackServerContext* context,
                                                const StatusRequest*, StatusResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  node_.Status([reactor, response](StatusResponse status) {
    *response = std::move(status);
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ClientService::Block(grpc::CallbackServerContext* context,
                                               const BlockRequest* request, BlockResponse*) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  node_.Block({request->node().begin(), request->node().end()});
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ClientService::Metrics(grpc::CallbackServerContext* context,
                                                 const MetricsRequest*, MetricsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  node_.Metrics([reactor, response](std::string text) {
    response->set_text(std::move(text));
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

}  // namespace charybdis::node
