#include "echo_app.hpp"

namespace exactly::samples {
namespace {

struct echo_payload {
  int status = 200;
  nlohmann::json reply;
  bool fail = false;
};

server::parse_result<echo_payload> parse_echo(const server::incoming_request& in) {
  const auto j = nlohmann::json::parse(in.body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return server::invalid_payload{"body must be a JSON object"};
  const auto status = j.find("status");
  if (status == j.end() || !status->is_number_integer()) {
    return server::invalid_payload{"status must be an integer"};
  }
  if (j.contains("parse_throws"))
    throw std::runtime_error("the parse step threw");
  echo_payload p;
  p.status = status->get<int>();
  if (p.status < 100 || p.status > 599)
    return server::invalid_payload{"status must be 100..599"};
  if (const auto r = j.find("reply"); r != j.end())
    p.reply = *r;
  if (const auto f = j.find("fail"); f != j.end()) {
    if (!f->is_boolean())
      return server::invalid_payload{"fail must be a boolean"};
    p.fail = f->get<bool>();
  }
  return p;
}

}  // namespace

void register_echo_app(server::connector& c) {
  c.db().exec(
      "CREATE TABLE IF NOT EXISTS echo_executions (id TEXT PRIMARY KEY, n INTEGER NOT NULL);"
      "CREATE TABLE IF NOT EXISTS echo_deliveries (id TEXT PRIMARY KEY, n INTEGER NOT NULL);");
  c.route<echo_payload>(echo_route, parse_echo, [](server::session<echo_payload>& s) {
    const std::string id = s.id().to_string();
    s.db()
        .prepare(
            "INSERT INTO echo_executions(id, n) VALUES(?, 1)"
            " ON CONFLICT(id) DO UPDATE SET n = n + 1")
        .bind(1, id)
        .run();
    if (s.payload().fail)
      throw std::runtime_error("the payload asked the logic to fail");
    s.send("echo_executed", {{"id", id}});
    return server::stored_response{static_cast<unsigned>(s.payload().status), "application/json",
                                   nlohmann::json{{"reply", s.payload().reply}}.dump()};
  });
  c.on_message("echo_executed", [](server::message_context& m) {
    m.db().prepare(
            "INSERT INTO echo_deliveries(id, n) VALUES(?, 1)"
            " ON CONFLICT(id) DO UPDATE SET n = n + 1")
        .bind(1, m.body.at("id").get<std::string>())
        .run();
  });
}

std::int64_t echo_executions(sqlite::connection& db, const std::string& id) {
  return db.query_int64("SELECT n FROM echo_executions WHERE id = ?", id).value_or(0);
}

std::int64_t echo_executions_total(sqlite::connection& db) {
  return *db.query_int64("SELECT coalesce(sum(n), 0) FROM echo_executions");
}

std::int64_t echo_deliveries(sqlite::connection& db, const std::string& id) {
  return db.query_int64("SELECT n FROM echo_deliveries WHERE id = ?", id).value_or(0);
}

}  // namespace exactly::samples
