#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

class CivetServer;

namespace charybdis::node {

// Serves GET /metrics over HTTP (civetweb) with the text `render` returns.
class MetricsServer {
 public:
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address,
                                                             std::function<std::string()> render);
  ~MetricsServer();

 private:
  class Handler;
  MetricsServer() = default;

  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace charybdis::node
