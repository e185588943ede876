#pragma once

// One blocking connection to a node's CQL port (native protocol v4), as
// the benchmark's CQL clients use it: one request at a time on stream 0,
// prepared statements, in clear or through TLS.

#include <openssl/ssl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cql/wire.h"
#include "proto/client.pb.h"

namespace charybdis::node {

// What a request asks of paging: `page_size` rows a page (0: one answer
// with every row), from where `paging_state` says the last page ended.
struct CqlPaging {
  int32_t page_size = 0;
  std::optional<std::string> paging_state;
};

class CqlConnection {
 public:
  CqlConnection() = default;
  CqlConnection(const CqlConnection&) = delete;
  CqlConnection& operator=(const CqlConnection&) = delete;
  ~CqlConnection();

  // Connects (through TLS with `tls`), STARTUPs and prepares each of
  // `statements`; empty on success, else what failed.
  std::string Open(const std::string& address, const std::shared_ptr<SSL_CTX>& tls,
                   const std::vector<std::string>& statements);
  // EXECUTE of a statement Open prepared; the answer's opcode and body.
  std::pair<cql::Opcode, std::string> Execute(const std::string& statement, const std::vector<std::string>& values,
                                              ConsistencyLevel level, const CqlPaging& paging = {});
  // An unlogged BATCH of one prepared statement with each set of values.
  std::pair<cql::Opcode, std::string> Batch(const std::string& statement,
                                            const std::vector<std::vector<std::string>>& rows, ConsistencyLevel level);

 private:
  std::pair<cql::Opcode, std::string> Call(cql::Opcode opcode, const std::string& body);
  bool WriteAll(const std::string& bytes);
  bool ReadAll(std::string& buffer);

  int fd_ = -1;
  std::shared_ptr<SSL_CTX> tls_;
  SSL* ssl_ = nullptr;  // through TLS: blocking, as the socket is
  std::map<std::string, std::string> ids_;  // prepared statement ids
};

// A Rows result's header, read from `in` placed after the result's kind:
// `in` is left at the first row.
struct CqlRowsHeader {
  int32_t columns = 0;
  std::optional<std::string> paging_state;  // more pages follow
  int32_t rows = 0;
};
CqlRowsHeader ReadRowsHeader(cql::Reader& in);

}  // namespace charybdis::node
