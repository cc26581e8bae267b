// Fuzzes the server's request path without sockets: the input bytes are one connection's
// requests, read by Beast's parser with the server's limits as http_session reads them, then
// answered one after the other by request_dispatch (routing, authentication, id checks, the
// connector and its commit groups) over a connector on an in-memory SQLite database.
// Properties, for any bytes:
//  - nothing throws out of the dispatch, and no answer is 5xx (the store cannot fail here and
//    the business logic never throws);
//  - a problem answer is application/problem+json whose "status" is the HTTP status;
//  - the business logic runs at most once per id, and every executed or replayed answer of an
//    id is the response stored by its one execution.
#include <exactly/common/protocol.hpp>
#include <exactly/server/connector.hpp>

#include "server/src/authenticator.hpp"
#include "server/src/metrics.hpp"
#include "server/src/request_dispatch.hpp"
#include "server/src/router.hpp"
#include "server/src/storage_lanes.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {

using namespace exactly;
using namespace exactly::server;
using namespace exactly::net;
using nlohmann::json;

// The ids of the seed corpus carry this time (0x018bcfe56800): accepted, not too old.
constexpr std::int64_t now_ms = 1'700'000'000'000;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "server request property broken: %s\n", what.c_str());
  std::abort();
}

// A connection whose peer has sent everything already in the buffer, then closed.
struct closed_stream {
  template <class Buffers>
  std::size_t read_some(const Buffers&, beast::error_code& ec) {
    ec = asio::error::eof;
    return 0;
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& b) {
    beast::error_code ec;
    read_some(b, ec);
    throw beast::system_error(ec);
  }
};

// The payload of the fuzzed route: {"amount": <integer>}.
struct payment {
  std::int64_t amount = 0;
};

parse_result<payment> parse_payment(const incoming_request& in) {
  if (in.content_type != "application/json")
    return invalid_payload{"the body must be application/json"};
  const json j = json::parse(in.body, nullptr, false);
  if (!j.is_object() || !j.contains("amount") || !j["amount"].is_number_integer())
    return invalid_payload{"amount must be an integer"};
  return payment{j["amount"].get<std::int64_t>()};
}

server_options fuzz_options() {
  server_options o;
  o.api_keys = {{"key-a", "alice"}, {"key-b", "bob"}};
  o.max_body_bytes = 4096;  // small, so the fuzzer reaches the limits
  o.max_header_bytes = 2048;
  return o;
}

// One server's request path, fresh for each input.
struct server_path {
  server_options opts = fuzz_options();
  connector conn{connector_options{.db_path = ":memory:",
                                   .db = {.wal = false},
                                   .clock = [] { return now_ms; },
                                   .separate_reads = false}};
  authenticator auth{opts};
  router routes;
  metrics counters;
  storage_lanes storage{conn, /*group_commit=*/true, /*flush_every_commit=*/false,
                        /*background_sync=*/false};
  request_dispatch dispatch{conn, auth, routes, counters, storage, opts};
  std::map<std::string, int> executions;          // by id: business logic runs
  std::map<std::string, beast_response> results;  // by id: the executed answer

  server_path() {
    conn.route<payment>("/pay/{id}", parse_payment, [this](session<payment>& s) {
      const std::string id = s.id().to_string();
      if (++executions[id] > 1)
        fail("the business logic ran twice for " + id);
      const unsigned status = s.payload().amount > 1000 ? 402 : 201;
      return stored_response{status, "application/json",
                             json{{"id", id}, {"amount", s.payload().amount}}.dump()};
    });
    for (const std::string& r : conn.routes())
      routes.add_connector_route(r);
    routes.add_user_route(
        "GET", "/hello/{name}",
        [](const http_request& in) {
          return http_response{200, "text/plain", "hello " + in.params.at("name"), {}};
        },
        /*authenticated=*/false);
  }

  // The answer to `req`, run on the storage thread's io_context in this thread.
  beast_response answer(beast_request& req) {
    std::optional<beast_response> res;
    asio::io_context& io = storage.first().context();
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { res = co_await dispatch.respond(req, ""); },
        [](std::exception_ptr e) {
          if (e)
            std::rethrow_exception(e);
        });
    io.restart();
    io.run();
    if (!res)
      fail("the dispatch gave no answer");
    return std::move(*res);
  }

  void check(const beast_request& req, const beast_response& res) {
    const std::string what = std::string(to_view(req.method_string())) + " " +
                             std::string(to_view(req.target())) + " -> " +
                             std::to_string(res.result_int());
    if (res.result_int() >= 500)
      fail("5xx without a storage failure: " + what + " " + res.body());
    if (to_view(res[http::field::content_type]) == protocol::problem_content_type) {
      const json p = json::parse(res.body(), nullptr, false);
      if (!p.is_object() || !p.contains("status") || p["status"] != res.result_int())
        fail("a problem body without its status: " + what + " " + res.body());
    }
    const std::string_view outcome = to_view(res[protocol::outcome_header]);
    if (outcome.empty())
      return;
    const std::string_view target = to_view(req.target());
    const route_match m =
        routes.match(to_view(req.method_string()), target.substr(0, target.find('?')));
    const auto id = request_id::parse(m.id);
    if (m.matched != route_match::kind::connector || !id)
      fail("an outcome for a request that is no valid connector request: " + what);
    const std::string key = id->to_string();
    if (outcome == protocol::outcome_executed) {
      if (!results.emplace(key, res).second)
        fail("executed twice: " + what);
      if (executions[key] != 1)
        fail("executed without its business logic running once: " + what);
      return;
    }
    if (outcome != protocol::outcome_replayed)
      fail("an unknown outcome: " + what);
    const auto first = results.find(key);
    if (first == results.end())
      fail("replayed without an execution: " + what);
    if (first->second.result_int() != res.result_int() || first->second.body() != res.body())
      fail("a replay differs from the execution: " + what);
  }
};

// The answer the session sends to a request it could not read: 413, 431 or 400 (or none).
void check_read_failure(beast::error_code ec) {
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == asio::error::eof)
    return;  // the connection closes without an answer
  if (ec == http::error::body_limit || ec == http::error::header_limit)
    return;  // 413 / 431
  if (ec.category() != http::make_error_code(http::error::bad_version).category())
    fail("a read failure that is not an HTTP parse error: " + ec.message());  // would be 400
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  server_path server;
  beast::flat_buffer buffer;
  buffer.commit(asio::buffer_copy(buffer.prepare(size), asio::buffer(data, size)));
  closed_stream stream;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(server.opts.max_header_bytes));
    parser.body_limit(server.opts.max_body_bytes);
    beast::error_code ec;
    http::read(stream, buffer, parser, ec);
    if (ec) {
      check_read_failure(ec);
      break;
    }
    beast_request req = parser.release();
    const beast_request copy = req;  // respond() may take the body
    const beast_response res = server.answer(req);
    server.check(copy, res);
    if (!copy.keep_alive())
      break;
  }
  return 0;
}
