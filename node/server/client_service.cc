#include "node/server/client_service.h"

#include "core/cql/permission_checks.h"
#include "core/cql/system_auth_guard.h"
#include "node/server/node.h"

namespace charybdis::node {

namespace {

// The role and password a call carries (ClientApiAuth), if it carries both.
std::optional<auth::Credentials> CredentialsOf(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto role = metadata.find(kRoleMetadata);
  auto password = metadata.find(kPasswordMetadata);
  if (role == metadata.end() || password == metadata.end()) return std::nullopt;
  return auth::Credentials{std::string(role->second.data(), role->second.size()),
                           std::string(password->second.data(), password->second.size())};
}

// The caller's address without its port ("ipv4:127.0.0.1:5000" gives
// "127.0.0.1"): what failed logins are counted by.
std::string PeerAddress(const grpc::CallbackServerContext& context) {
  std::string peer = context.peer();
  if (const size_t scheme = peer.find(':'); scheme != std::string::npos) peer.erase(0, scheme + 1);
  if (const size_t port = peer.rfind(':'); port != std::string::npos) peer.erase(port);
  return peer;
}

}  // namespace

void ClientService::Checked(grpc::CallbackServerContext* context, const std::function<CallNeeds()>& needs,
                            std::function<void(grpc::Status)> then) {
  // With passwords off nothing is worked out: this is every request's path.
  if (!node_.config().cql_auth.required) return then(grpc::Status::OK);
  node_.CheckClientCall(PeerAddress(*context), CredentialsOf(*context), needs(), std::move(then));
}

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
  Checked(context, [request] { return cql::NeededForRequest(request->request()); },
          [this, context, reactor, request, response](grpc::Status status) {
    if (!status.ok()) return reactor->Finish(status);
    node_.Execute(*request, [this, context, reactor, request, response](ClientResponse answer) {
      *response = std::move(answer);
      if (!node_.config().cql_auth.required || !request->request().has_schema_change()) {
        return reactor->Finish(grpc::Status::OK);
      }
      // As through CQL, the answer goes once the grants follow. One that
      // failed is logged; the schema change stands either way.
      node_.FollowClientSchemaChange(CredentialsOf(*context)->role, request->request(), *response,
                                     [reactor](bool) { reactor->Finish(grpc::Status::OK); });
    });
  });
  return reactor;
}

// Status and Metrics answer without a login: they change nothing and carry
// no data (what /metrics serves anyway), and whoever starts or watches a
// cluster asks them before it can log anyone in (docs/security.md).
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
  // Cutting a node's links is a superuser's (nullopt).
  Checked(context, []() -> CallNeeds { return std::nullopt; }, [this, reactor, request](grpc::Status status) {
    if (status.ok()) node_.Block({request->node().begin(), request->node().end()});
    reactor->Finish(status);
  });
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
