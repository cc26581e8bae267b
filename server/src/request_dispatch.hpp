#pragma once
// Answers one HTTP request: /healthz, /metrics, the operator page, authentication, user routes,
// connector routes.

#include <exactly/server/connector.hpp>
#include <exactly/server/http_server.hpp>

#include "asio_beast.hpp"
#include "operator_page.hpp"
#include "respond.hpp"
#include "router.hpp"
#include "test_control.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace exactly::server {

class authenticator;
class metrics;
class storage_lanes;
struct storage_figures;

class request_dispatch {
 public:
  // `opts`: metrics_need_key (/metrics answered only with a valid key, like the connector's
  // routes), metrics_max_age (how old the storage figures a scrape shows may be), test_control
  // (the interface of proto-spec §12, off when its key is empty), operator_page (off unless
  // enabled).
  request_dispatch(connector& c, const authenticator& auth, const router& routes, metrics& counters,
                   storage_lanes& storage, const server_options& opts);
  ~request_dispatch();

  // The answer to `req` (network thread); `certificate_sha256`: the connection's client
  // certificate, "" when none. A failure of the request is an answer, not an exception.
  net::asio::awaitable<beast_response> respond(beast_request& req,
                                               const std::string& certificate_sha256);
  // The refusal of a request known from its header alone (`header`: its body not read yet), in
  // the spec's check order: authentication (401), route (404), method (405), id syntax (400),
  // then a `content_length` above `max_body_bytes` (413); nullopt when the body may be read.
  std::optional<beast_response> refuse_before_body(const beast_request& header,
                                                   const std::string& certificate_sha256,
                                                   std::optional<std::uint64_t> content_length,
                                                   std::size_t max_body_bytes);
  // The Beast response of `r`, counted in the metrics when it is a problem.
  beast_response reply(interaction_response r, unsigned version);
  // The Prometheus text served at /metrics, every figure read now (storage thread).
  std::string render_metrics();

 private:
  // A request that passed authentication, route, method and id syntax.
  struct admission {
    route_match m;
    std::string principal;
  };
  // The first of those checks that fails as its answer, else the admission.
  std::variant<beast_response, admission> admit(const beast_request& req,
                                                const std::string& certificate_sha256);
  // 401 unauthorized, with the scheme to use.
  beast_response unauthorized(unsigned version);
  // 401 for the operator page, with the Basic scheme so that a browser asks for the key.
  beast_response operator_unauthorized(unsigned version);
  // 401 when /metrics needs a key and `req` has none valid; nullopt otherwise.
  std::optional<beast_response> refuse_metrics(const beast_request& req,
                                               const std::string& certificate_sha256);
  // An answer known at once.
  static net::asio::awaitable<beast_response> answered(beast_response res);
  // /metrics: the commit groups' figures as they are now, and the storage figures read on the
  // storage thread (O(1): counters, no scan) when the last reading is older than
  // metrics_max_age and none is under way, rendered here.
  net::asio::awaitable<beast_response> metrics_page(unsigned version);
  // The figures a scrape reads on the storage thread (storage thread).
  storage_figures read_figures();
  // A test-control endpoint, authorized by its own key, answered on the storage thread.
  net::asio::awaitable<beast_response> test_control_answer(beast_request& req);
  // The operator page, authorized by its own key, read and rendered on the storage thread.
  net::asio::awaitable<beast_response> operator_page_answer(beast_request& req);
  // A user route: its handler in the open commit group.
  net::asio::awaitable<beast_response> user_route(beast_request& req, route_match m,
                                                  std::string principal);
  // A connector route: GETs through the read-only connection when there is one, else the
  // connector in the open commit group.
  net::asio::awaitable<beast_response> connector_route(beast_request& req, route_match m,
                                                       std::string principal);
  // A GET through the connection of the reads (connector::read): on their own thread when each
  // takes a round trip, else on the network thread.
  net::asio::awaitable<beast_response> read_apart(const interaction_request& ir, unsigned version);

  connector& connector_;
  const authenticator& auth_;
  const router& routes_;
  metrics& counters_;
  storage_lanes& storage_;
  bool metrics_need_key_;
  std::chrono::milliseconds metrics_max_age_;
  // The last storage figures a scrape read, and when (network thread only).
  std::unique_ptr<storage_figures> figures_;
  std::chrono::steady_clock::time_point figures_read_at_{};
  bool reading_figures_ = false;
  test_control_page test_control_;
  operator_page operator_page_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace exactly::server
