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

// Adds one to the count of `id` in `table` (echo_executions or echo_deliveries), in the
// transaction open on `db`.
void count_one(const database& db, const std::string& table, const std::string& id) {
  db.execute("INSERT INTO " + table +
                 "(id, n) VALUES(?, 1) ON CONFLICT(id) DO UPDATE SET n = " + table + ".n + 1",
             id);
}

// The count of `id` in `table`, or with id "" the sum over all ids.
std::int64_t count_of(const database& db, const std::string& table, const std::string& id) {
  const std::string sum = "SELECT coalesce(sum(n), 0) FROM " + table;
  return *(id.empty() ? db.query_int64(sum) : db.query_int64(sum + " WHERE id = ?", id));
}

}  // namespace

void register_echo_app(server::connector& c) {
  c.storage().exec(
      "CREATE TABLE IF NOT EXISTS echo_executions (id TEXT PRIMARY KEY, n INTEGER NOT NULL);"
      "CREATE TABLE IF NOT EXISTS echo_deliveries (id TEXT PRIMARY KEY, n INTEGER NOT NULL);");
  c.route<echo_payload>(echo_route, parse_echo, [](server::session<echo_payload>& s) {
    const std::string id = s.id().to_string();
    count_one(s.storage(), "echo_executions", id);
    if (s.payload().fail)
      throw std::runtime_error("the payload asked the logic to fail");
    s.send("echo_executed", {{"id", id}});
    return server::stored_response{static_cast<unsigned>(s.payload().status), "application/json",
                                   nlohmann::json{{"reply", s.payload().reply}}.dump()};
  });
  c.on_message("echo_executed", [](server::message_context& m) {
    count_one(m.storage(), "echo_deliveries", m.body.at("id").get<std::string>());
  });
}

std::int64_t echo_executions(const database& db, const std::string& id) {
  return count_of(db, "echo_executions", id);
}

std::int64_t echo_executions_total(const database& db) {
  return count_of(db, "echo_executions", "");
}

std::int64_t echo_deliveries(const database& db, const std::string& id) {
  return count_of(db, "echo_deliveries", id);
}

}  // namespace exactly::samples
