#pragma once
// Accepting connections, the set of open ones, and the graceful shutdown that closes them.

#include "asio_beast.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

namespace exactly::server {

// An open connection as the shutdown sees it: idle ones are closed at once, busy ones (a
// request being answered) after the grace.
struct open_connection {
  net::beast::tcp_stream* stream;
  bool busy = false;
};

// Everything but bind() runs on the network thread.
class listener {
 public:
  using serve_fn = std::function<net::asio::awaitable<void>(net::tcp::socket)>;

  // `max_connections`: connections served at once; one more is accepted and closed at once,
  // counted by `on_refused`.
  listener(net::asio::io_context& io, std::chrono::milliseconds shutdown_grace,
           std::size_t max_connections, std::function<void()> on_refused);
  // Binds and listens on host:port; returns the bound port. Throws on failure.
  std::uint16_t bind(const std::string& host, std::uint16_t port);
  // Starts accepting; `serve` serves each accepted connection.
  void start(serve_fn serve);
  // Begins the shutdown on SIGINT or SIGTERM.
  void shut_down_on_signals();
  // Stops accepting, closes idle connections now and the others after the shutdown grace.
  void begin_shutdown();
  // Whether the shutdown has begun: connections finish their request and close.
  bool stopping() const { return stopping_; }
  // Connections being served now (accepted and not yet closed).
  std::size_t live() const { return live_; }
  // Registers an open connection (again: no effect).
  void add(open_connection* c);
  // Forgets a closed connection; the last one to close during the shutdown ends the grace.
  void remove(open_connection* c);

 private:
  // Accepts until the acceptor closes.
  net::asio::awaitable<void> accept_loop(serve_fn serve);
  // Runs one connection's `session`, holding its place under max_connections until it ends.
  net::asio::awaitable<void> counted(net::asio::awaitable<void> session);

  net::asio::io_context& io_;
  std::chrono::milliseconds shutdown_grace_;
  net::tcp::acceptor acceptor_;
  std::optional<net::asio::signal_set> signals_;
  net::asio::steady_timer grace_timer_, retry_timer_;
  std::set<open_connection*> connections_;
  std::size_t max_connections_;
  std::function<void()> on_refused_;
  std::size_t live_ = 0;
  bool stopping_ = false;
};

// Keeps a connection registered with a listener while it lives, however its coroutine ends (an
// exception included), so the shutdown never reaches a connection that is gone.
class connection_registration {
 public:
  connection_registration(listener& l, open_connection* c) : listener_(l), connection_(c) {
    listener_.add(connection_);
  }
  ~connection_registration() { listener_.remove(connection_); }
  connection_registration(const connection_registration&) = delete;
  connection_registration& operator=(const connection_registration&) = delete;

 private:
  listener& listener_;
  open_connection* connection_;
};

}  // namespace exactly::server
