#pragma once

// Client requests and answers for tests, in one place: a write of one
// column, a read of a partition, conditional writes, the first value of an
// answer. Each test file names its own table and column.

#include <string>

#include "proto/client.pb.h"

namespace charybdis::testing {

inline WriteOp PutOp(const std::string& table, const std::string& column, const std::string& key,
                     const std::string& value, ConsistencyLevel level = CL_UNSET) {
  WriteOp write;
  write.set_table(table);
  write.set_partition_key(key);
  write.set_consistency(level);
  ColumnValue* put = write.add_put();
  put->set_column(column);
  put->set_value(value);
  return write;
}

inline ClientRequest PutRequest(const std::string& table, const std::string& column,
                                const std::string& key, const std::string& value,
                                ConsistencyLevel level) {
  ClientRequest request;
  *request.mutable_write() = PutOp(table, column, key, value, level);
  return request;
}

inline ClientRequest GetRequest(const std::string& table, const std::string& key,
                                ConsistencyLevel level) {
  ClientRequest request;
  request.mutable_read()->set_table(table);
  request.mutable_read()->set_partition_key(key);
  request.mutable_read()->set_consistency(level);
  return request;
}

// INSERT ... IF NOT EXISTS.
inline ClientRequest IfNotExistsRequest(const std::string& table, const std::string& column,
                                        const std::string& key, const std::string& value) {
  ClientRequest request;
  CasStatement* statement = request.mutable_cas()->add_statement();
  *statement->mutable_write() = PutOp(table, column, key, value);
  statement->set_if_not_exists(true);
  return request;
}

// UPDATE ... SET column = value IF column <op> expected.
inline ClientRequest IfRequest(const std::string& table, const std::string& column,
                               const std::string& key, Condition::Op op,
                               const std::string& expected, const std::string& value) {
  ClientRequest request;
  CasStatement* statement = request.mutable_cas()->add_statement();
  *statement->mutable_write() = PutOp(table, column, key, value);
  Condition* condition = statement->add_condition();
  condition->set_column(column);
  condition->set_op(op);
  condition->set_value(expected);
  return request;
}

// The first cell of the first row, or "" when nothing was read.
inline std::string FirstValue(const ClientResponse& response) {
  return response.rows_size() == 0 ? "" : response.rows(0).cells(0).value();
}

}  // namespace charybdis::testing
