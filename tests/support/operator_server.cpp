#include "operator_server.hpp"

#include "http_client.hpp"
#include "requests.hpp"

#include <exactly/common/clock.hpp>
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace exactly::test {
namespace {

// The first column of each row `sql` selects, as text, in order (either engine).
std::vector<std::string> texts(const database& db, const std::string& sql) {
  std::vector<std::string> out;
  if (db.kind() == engine::postgres) {
    const pg::result r = db.as_postgres().query(sql);
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(r.text(i, 0));
    return out;
  }
  auto& q = db.as_sqlite().prepare(sql);
  while (q.step())
    out.push_back(q.text(0));
  q.reset();
  return out;
}

}  // namespace

operator_server::operator_server(server::operator_page_options page) {
  server::connector_options co;
  co.db_path = (dir_.path() / "server.db").string();
  if (const std::string pg = echo_server_config::default_test_postgres(); !pg.empty())
    co.postgres = pg::options{pg};
  co.outbox_max_attempts = 1;
  connector_ = std::make_unique<server::connector>(co);
  register_echo_app(*connector_);
  connector_->route<nlohmann::json>(
      failing_route,
      [](const server::incoming_request& in) -> server::parse_result<nlohmann::json> {
        return nlohmann::json::parse(in.body);
      },
      [](server::session<nlohmann::json>& s) {
        s.send("always_fails", s.payload());
        return server::stored_response{200, "application/json", "{}"};
      });
  connector_->on_message("always_fails", [](server::message_context& m) {
    throw std::runtime_error(m.body.at("error").get<std::string>());
  });
  server::server_options so;
  so.api_keys = {{alice_key, "alice"}, {evil_key, evil_owner}};
  so.dispatch_interval = std::chrono::milliseconds(20);
  so.sweep_interval = std::chrono::hours(24);
  so.operator_page = std::move(page);
  http_ = std::make_unique<server::http_server>(so, *connector_);
  port_ = http_->start();
}

operator_server::~operator_server() {
  http_->stop();
}

std::string operator_server::stage(const std::string& key) {
  const std::string id = request_id::mint().to_string();
  http_client c(port_);
  const auto r =
      c.request("PUT", path_of(id), R"({"status":200,"reply":"hi"})",
                {{"Authorization", "Bearer " + key}, {"Content-Type", "application/json"}});
  if (r.status != 201)
    throw std::runtime_error("PUT answered " + std::to_string(r.status) + ": " + r.body);
  return id;
}

std::string operator_server::execute(const std::string& key) {
  const std::string id = stage(key);
  http_client c(port_);
  const auto r = c.request("POST", path_of(id), "", {{"Authorization", "Bearer " + key}});
  if (r.status != 200)
    throw std::runtime_error("POST answered " + std::to_string(r.status) + ": " + r.body);
  return id;
}

void operator_server::dead_letter(const std::string& error) {
  const std::int64_t before = dead_letters();
  const std::string path = "/failing/" + request_id::mint().to_string();
  const header_list h = {{"Authorization", "Bearer " + alice_key},
                         {"Content-Type", "application/json"}};
  http_client c(port_);
  const std::string body = nlohmann::json{{"error", error}}.dump();
  if (c.request("PUT", path, body, h).status != 201 || c.request("POST", path, "", h).status != 200)
    throw std::runtime_error("the failing route did not execute");
  if (!eventually([&] { return dead_letters() > before; }))
    throw std::runtime_error("the failing message was not dead-lettered");
}

void operator_server::insert_interaction(const std::string& route, const std::string& id,
                                         const std::string& owner, int state,
                                         std::int64_t since_ms) {
  http_->run_on_storage([&] {
    // Written as by a hand: on PostgreSQL the server's sessions count their own rows inline
    // (exactly.inline_counts), so the counting trigger is let count this one.
    const database db = connector_->storage();
    database_transaction tx(db);
    if (db.kind() == engine::postgres)
      db.execute("SET LOCAL exactly.inline_counts = 'off'");
    db.execute(
        "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, state_since_ms)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        route, id, owner, since_ms, static_cast<std::int64_t>(state), since_ms);
    // A savepoint in an open group keeps a SET LOCAL past its release: on again for the rest.
    if (db.kind() == engine::postgres)
      db.execute("SET LOCAL exactly.inline_counts = 'on'");
    tx.commit();
  });
}

void operator_server::insert_waiting_message(const std::string& type,
                                             const std::string& last_error) {
  http_->run_on_storage([&] {
    connector_->storage().execute(
        "INSERT INTO exactly_server_outbox(type, body, source, created_ms, attempts,"
        " next_attempt_ms, last_error) VALUES (?, '{}', ?, ?, 3, ?, ?)",
        type, std::string("/inserted/{id} by the test"), system_now_ms(),
        system_now_ms() + 86'400'000, last_error);
  });
}

void operator_server::insert_dead_letter(const std::string& type, const std::string& error) {
  http_->run_on_storage([&] {
    connector_->storage().execute(
        "INSERT INTO exactly_server_dead_letters(seq, type, body, source, created_ms, attempts,"
        " error, failed_ms) VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM"
        " exactly_server_dead_letters), ?, '{}', ?, 0, 1, ?, 0)",
        type, std::string("/inserted/{id} by the test"), error);
  });
}

std::int64_t operator_server::count(int state) {
  std::int64_t n = 0;
  http_->run_on_storage([&] {
    n = *connector_->storage().query_int64(
        "SELECT count(*) FROM exactly_interactions WHERE state = ?",
        static_cast<std::int64_t>(state));
  });
  return n;
}

std::int64_t operator_server::dead_letters() {
  std::int64_t n = 0;
  http_->run_on_storage([&] {
    n = *connector_->storage().query_int64("SELECT count(*) FROM exactly_server_dead_letters");
  });
  return n;
}

std::int64_t operator_server::outbox_pending() {
  std::int64_t n = 0;
  http_->run_on_storage([&] {
    n = *connector_->storage().query_int64("SELECT count(*) FROM exactly_server_outbox");
  });
  return n;
}

std::int64_t operator_server::executions_total() {
  std::int64_t n = 0;
  http_->run_on_storage([&] { n = echo_executions_total(connector_->storage()); });
  return n;
}

std::vector<std::string> operator_server::ids(int state) {
  std::vector<std::string> out;
  http_->run_on_storage([&] {
    out = texts(connector_->storage(), "SELECT id FROM exactly_interactions WHERE state = " +
                                           std::to_string(state) + " ORDER BY state_since_ms, id");
  });
  return out;
}

std::vector<std::string> operator_server::dead_letter_errors() {
  std::vector<std::string> out;
  http_->run_on_storage([&] {
    out = texts(connector_->storage(),
                "SELECT error FROM exactly_server_dead_letters ORDER BY seq DESC");
  });
  return out;
}

}  // namespace exactly::test
