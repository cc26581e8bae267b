// What a running handler can do: read its message, write state, send messages, invoke_http.
#include "handler_scope.hpp"

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <sqlite3.h>

#include <stdexcept>

namespace exactly::client {

void detail::expect_transaction_open(const database& db) {
  if (db.in_transaction())
    return;
  if (db.kind() == engine::sqlite)
    throw sqlite::error(SQLITE_ABORT,
                        "a statement of the handler ended the batch's transaction (RAISE(ROLLBACK)"
                        " or a conflict clause ROLLBACK) and the handler went on");
  // On PostgreSQL the transaction is gone when the connection broke under a handler that caught
  // the error: storage trouble, charged to no message. Otherwise the handler ended it itself.
  if (db.as_postgres().lost())
    throw pg::error("08006",
                    "the connection to PostgreSQL was lost under the handler, which "
                    "caught the error and went on");
  throw pg::error("25P01",
                  "the handler ended the batch's transaction (COMMIT or ROLLBACK) and "
                  "went on");
}

sqlite::connection& handler_context::db() {
  return scope_.core.db.as_sqlite();
}

pg::connection& handler_context::pg() {
  return scope_.core.db.as_postgres();
}

exactly::database handler_context::database() {
  return scope_.core.db;
}

const message& handler_context::incoming() const {
  return scope_.incoming;
}

std::string_view handler_context::endpoint_name() const {
  return scope_.core.name;
}

const http_result* handler_context::response() const {
  return scope_.response;
}

void handler_context::send(std::string_view to, message m) {
  scope_.core.queues.enqueue(to, m, scope_.now_ms);
}

std::string handler_context::invoke_http(std::string_view url_template, std::string_view body,
                                         std::string_view content_type, message follow_up) {
  endpoint_core& core = scope_.core;
  if (!core.opts.transport)
    throw std::logic_error("invoke_http needs endpoint_options.transport");
  std::string url(url_template);
  const auto at = url.find(protocol::id_placeholder);
  if (at == std::string::npos)
    throw std::invalid_argument("URL template without {id}: " + url);
  const std::string id = request_id::mint_monotonic(scope_.now_ms).to_string();
  url.replace(at, protocol::id_placeholder.size(), id);
  // A URL the transport cannot send to fails here, before anything is journaled or sent (a
  // cleanup DELETE of it could never be sent either).
  core.opts.transport->check_url(url);
  const std::optional<std::int64_t> staged_until = scope_.puts.send({id, url}, content_type, body);

  if (follow_up.id.empty())
    follow_up.id = id + "/follow-up";
  follow_up.headers[request_id_header] = id;
  follow_up.headers[url_header] = url;
  // The body and Content-Type are kept with the row: a POST answered 404 stages them again.
  core.invocations.add({id, core.name, url, std::move(follow_up), 0, staged_until,
                        std::string(body), std::string(content_type)},
                       scope_.now_ms);
  return id;
}

}  // namespace exactly::client
