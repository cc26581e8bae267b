#pragma once
// What the runtime lends a running handler through its handler_context.

#include "attempt_puts.hpp"
#include "endpoint_core.hpp"

#include <exactly/common/database.hpp>
#include <exactly/common/storage_error.hpp>

#include <cstdint>

namespace exactly::client::detail {

struct handler_scope {
  endpoint_core& core;
  attempt_puts& puts;  // the PUTs of the batch's handler attempts
  std::int64_t now_ms;
  const message& incoming;
  const http_result* response;  // a follow-up's stored response, else nullptr
};

// Whether `e`, thrown while a handler attempt ran on `db`, fails that attempt alone: a statement
// of the handler's that the database refused (a constraint, a syntax error). Storage trouble, a
// write of the runtime's sent with the same round trip (PostgreSQL), or a refusal that ended the
// batch's transaction (SQLite's RAISE(ROLLBACK)) fails the whole batch instead.
inline bool fails_the_attempt_alone(const database& db, const storage_error& e) {
  return !e.storage_failure() && !e.from_deferred_write() && db.in_transaction();
}

// After a handler returned: throws a storage_error that fails the whole batch when its
// transaction is gone and the handler went on, so that nothing after it commits outside it: a
// refusal when a statement of the handler ended it (SQLite's RAISE(ROLLBACK)), storage trouble
// when PostgreSQL's connection broke under a handler that caught the error.
void expect_transaction_open(const database& db);

}  // namespace exactly::client::detail
