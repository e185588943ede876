#include "node/server/metrics_server.h"

#include <CivetServer.h>

#include "absl/strings/str_cat.h"

namespace charybdis::node {

class MetricsServer::Handler final : public CivetHandler {
 public:
  explicit Handler(std::function<std::string()> render) : render_(std::move(render)) {}

  bool handleGet(CivetServer*, struct mg_connection* connection) override {
    const std::string body = render_();
    mg_printf(connection,
              "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
              body.size());
    mg_write(connection, body.data(), body.size());
    return true;
  }

 private:
  std::function<std::string()> render_;
};

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, std::function<std::string()> render) {
  // civetweb takes "host:port" as a listening port.
  const std::vector<std::string> options = {"listening_ports", address, "num_threads", "2"};
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->handler_ = std::make_unique<Handler>(std::move(render));
  try {
    server->server_ = std::make_unique<CivetServer>(options);
  } catch (const CivetException& error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot serve /metrics on ", address, " (port in use?): ", error.what()));
  }
  server->server_->addHandler("/metrics", server->handler_.get());
  return server;
}

MetricsServer::~MetricsServer() {
  if (server_ != nullptr) server_->close();
}

}  // namespace charybdis::node
