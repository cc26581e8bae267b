#pragma once
// One connection's life: TLS handshake, then read, respond and write until it closes.

#include <exactly/server/http_server.hpp>

#include "asio_beast.hpp"

#include <boost/asio/ssl/context.hpp>

namespace exactly::server {

class access_log;
class authenticator;
class listener;
class metrics;
class request_dispatch;

// What every connection of one server shares.
struct session_context {
  const server_options& opts;
  net::ssl::context* tls;  // null: plain http
  request_dispatch& dispatch;
  metrics& counters;
  listener& connections;
  const authenticator& auth;
  access_log* log;                 // null: no access log
  std::size_t tls_handshakes = 0;  // in progress now (network thread)
};

// Serves the connection on `socket` until the peer leaves, a limit is hit or the server stops
// (network thread).
net::asio::awaitable<void> run_session(net::tcp::socket socket, session_context& ctx);

}  // namespace exactly::server
