// broken-server: the echo connector server with ONE protocol rule broken, to show that
// exactly-conformance fails such a server. The real server answers, but the echo route's four
// verbs go through a user route that hands them to the connector and then breaks the rule:
//   restage         DELETE removes the row instead of leaving a tombstone, so a later PUT of the
//                   id stages it again (and a POST runs it a second time);
//   double-execute  every POST replayed after the id's execution runs the echo logic again and
//                   answers "executed", as a server without the per-id lock does for concurrent
//                   POSTs (sequential replays too, so the result does not hang on timing);
//   gone-as-404     a POST or GET of an unknown id too old to stage answers 404 request-unknown
//                   instead of 410 request-too-old;
//   echo-body       executed and replayed answers carry {"reply":"tampered"}, not the echo of the
//                   staged body (the same every time, so only the echo check can see it);
//   problem-status  a 404 request-unknown problem says "status": 400 in its body.
// Prints "listening on 127.0.0.1:PORT" once it serves; keys alice / bob as given.

#include <echo_app.hpp>

#include <exactly/common/http_date.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <set>

namespace {

using namespace exactly;

server::http_response to_http(const server::interaction_response& r) {
  server::http_response out{r.status, r.content_type, r.body, {}};
  if (!r.outcome.empty())
    out.headers.emplace_back(std::string(protocol::outcome_header), r.outcome);
  if (r.available_until_ms)
    out.headers.emplace_back(std::string(protocol::retention_header),
                             format_http_date(*r.available_until_ms));
  return out;
}

server::http_response problem_answer(errc e, std::string detail) {
  const problem p = make_problem(e, std::move(detail));
  return {p.status, std::string(protocol::problem_content_type), to_body(p), {}};
}

bool is_problem(const server::interaction_response& r, errc e) {
  return r.problem && *r.problem == e;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"broken-server: the echo server with one protocol rule broken (tests only)"};
  std::string mode, key, second_key, db;
  app.add_option("--break", mode,
                 "restage, double-execute, gone-as-404, echo-body or problem-status")
      ->required()
      ->check(CLI::IsMember(
          {"restage", "double-execute", "gone-as-404", "echo-body", "problem-status"}));
  app.add_option("--key", key, "alice's API key")->required();
  app.add_option("--second-key", second_key, "bob's API key")->required();
  app.add_option("--db", db, "SQLite database file")->required();
  CLI11_PARSE(app, argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("broken-server"));  // stdout is for the port

  server::connector_options co;
  co.db_path = db;
  server::connector connector(co);
  samples::register_echo_app(connector);
  server::server_options so;
  so.api_keys = {{key, "alice"}, {second_key, "bob"}};
  so.max_body_bytes = 1024;
  server::http_server http(so, connector);

  const std::string route = samples::echo_route;
  std::set<std::string> executed;  // ids this server executed (storage thread)
  for (const auto& [name, v] : {std::pair{"PUT", verb::put}, std::pair{"POST", verb::post},
                                std::pair{"GET", verb::get}, std::pair{"DELETE", verb::delete_}}) {
    const verb which = v;
    http.add_route(name, route, [&, which](const server::http_request& in) {
      const std::string id = in.params.at("id");
      if (!request_id::parse(id))
        return problem_answer(errc::invalid_request_id, "not a canonical UUIDv7");
      const server::interaction_response r =
          connector.handle({which, route, id, in.principal, in.header("content-type"), in.body});
      if (mode == "restage" && which == verb::delete_ && r.status == 204) {
        connector.storage().execute("DELETE FROM exactly_interactions WHERE route = ? AND id = ?",
                                    route, id);
      }
      if (mode == "gone-as-404" && is_problem(r, errc::request_too_old) &&
          (which == verb::post || which == verb::get))
        return problem_answer(errc::request_unknown, "no such interaction");
      if (mode == "echo-body" && !r.outcome.empty()) {
        server::http_response out = to_http(r);
        out.body = R"({"reply":"tampered"})";
        return out;
      }
      if (mode == "problem-status" && is_problem(r, errc::request_unknown)) {
        problem p = make_problem(errc::request_unknown, "no such interaction");
        p.status = 400;
        return server::http_response{
            404, std::string(protocol::problem_content_type), to_body(p), {}};
      }
      if (mode == "double-execute" && which == verb::post) {
        if (r.outcome == protocol::outcome_executed)
          executed.insert(id);
        if (r.outcome == protocol::outcome_replayed && executed.count(id)) {
          connector.storage().execute("UPDATE echo_executions SET n = n + 1 WHERE id = ?", id);
          server::interaction_response again = r;
          again.outcome = std::string(protocol::outcome_executed);
          return to_http(again);
        }
      }
      return to_http(r);
    });
  }
  http.shut_down_on_signals();
  const std::uint16_t port = http.start();
  std::cout << "listening on 127.0.0.1:" << port << std::endl;
  http.run();
  return 0;
}
