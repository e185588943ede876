#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "core/cql/connection.h"

namespace charybdis::node {

class Node;

// The CQL native protocol on a TCP port: one thread with epoll reads every
// connection, frames it and hands the frames to core's cql::Connection;
// answers are written by the thread that finished them (a shard's), or
// by this thread when the socket is full. A connection that breaks the
// protocol gets its error and is closed; the others go on.
class CqlServer {
 public:
  static absl::StatusOr<std::unique_ptr<CqlServer>> Start(const std::string& address, Node& node);
  ~CqlServer();

  struct Client;

 private:
  CqlServer(Node& node, int listener, int wakeup);
  void Loop();
  void Accept();
  void Read(const std::shared_ptr<Client>& client);
  void Close(int fd);

  Node& node_;
  int listener_ = -1;
  int wakeup_ = -1;  // an eventfd: a Send left bytes for this thread to write
  int epoll_ = -1;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<cql::Backend> backend_;
  cql::PreparedStatements prepared_;  // this thread's only
  std::map<int, std::shared_ptr<Client>> clients_;
  std::thread thread_;
};

}  // namespace charybdis::node
