#pragma once
// Answers one HTTP request: /healthz, /metrics, authentication, user routes, connector routes.

#include <exactly/server/connector.hpp>

#include "asio_beast.hpp"
#include "respond.hpp"
#include "router.hpp"

#include <string>

namespace exactly::server {

class authenticator;
class metrics;
class storage_executor;

class request_dispatch {
 public:
  // `metrics_need_key`: /metrics is answered only with a valid key, like the connector's routes.
  request_dispatch(connector& c, const authenticator& auth, const router& routes, metrics& counters,
                   storage_executor& storage, bool metrics_need_key);

  // The answer to `req` (network thread); `certificate_sha256`: the connection's client
  // certificate, "" when none. A failure of the request is an answer, not an exception.
  net::asio::awaitable<beast_response> respond(beast_request& req,
                                               const std::string& certificate_sha256);
  // The Beast response of `r`, counted in the metrics when it is a problem.
  beast_response reply(interaction_response r, unsigned version);
  // The Prometheus text served at /metrics (storage thread).
  std::string render_metrics();

 private:
  // An answer known at once.
  static net::asio::awaitable<beast_response> answered(beast_response res);
  // /metrics, rendered on the storage thread (O(1): counters, no scan).
  net::asio::awaitable<beast_response> metrics_page(unsigned version);
  // A user route: its handler in the open commit group.
  net::asio::awaitable<beast_response> user_route(beast_request& req, route_match m,
                                                  std::string principal);
  // A connector route: GETs through the read-only connection when there is one, else the
  // connector in the open commit group.
  net::asio::awaitable<beast_response> connector_route(beast_request& req, route_match m,
                                                       std::string principal);

  connector& connector_;
  const authenticator& auth_;
  const router& routes_;
  metrics& counters_;
  storage_executor& storage_;
  bool metrics_need_key_;
};

}  // namespace exactly::server
