// Accepting connections and shutting them down gracefully (see listener.hpp).
#include "listener.hpp"

#include "spawn_logged.hpp"

#include <spdlog/spdlog.h>

namespace exactly::server {

using namespace exactly::net;

listener::listener(asio::io_context& io, std::chrono::milliseconds shutdown_grace,
                   std::size_t max_connections, std::function<void()> on_refused)
    : io_(io),
      shutdown_grace_(shutdown_grace),
      acceptor_(io),
      grace_timer_(io),
      retry_timer_(io),
      max_connections_(max_connections),
      on_refused_(std::move(on_refused)) {}

std::uint16_t listener::bind(const std::string& host, std::uint16_t port) {
  const tcp::endpoint ep(asio::ip::make_address(host), port);
  acceptor_.open(ep.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(ep);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  return acceptor_.local_endpoint().port();
}

void listener::start(serve_fn serve) {
  spawn_logged(io_, accept_loop(std::move(serve)));
}

void listener::shut_down_on_signals() {
  if (signals_)
    return;
  signals_.emplace(io_, SIGINT, SIGTERM);
  signals_->async_wait([this](beast::error_code ec, int sig) {
    if (ec)
      return;
    spdlog::info("signal {}: shutting down gracefully", sig);
    begin_shutdown();
  });
}

asio::awaitable<void> listener::accept_loop(serve_fn serve) {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(use_tuple);
    if (stopping_ || ec == asio::error::operation_aborted)
      co_return;
    if (ec) {
      spdlog::warn("accept failed: {}", ec.message());
      retry_timer_.expires_after(std::chrono::milliseconds(50));
      co_await retry_timer_.async_wait(use_tuple);
      continue;
    }
    beast::error_code ignored;
    if (live_ >= max_connections_) {  // over the cap: closed unread, before any allocation
      socket.close(ignored);
      on_refused_();
      continue;
    }
    socket.set_option(tcp::no_delay(true), ignored);
    ++live_;
    spawn_logged(io_, counted(serve(std::move(socket))));
  }
}

asio::awaitable<void> listener::counted(asio::awaitable<void> session) {
  struct place {
    std::size_t& live;
    ~place() { --live; }
  } const held{live_};
  co_await std::move(session);
}

void listener::begin_shutdown() {
  if (stopping_)
    return;
  stopping_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  if (signals_)
    signals_->cancel(ignored);
  for (open_connection* c : connections_) {
    if (!c->busy)
      c->stream->socket().cancel(ignored);  // idle keep-alive: close now
  }
  if (!connections_.empty()) {
    grace_timer_.expires_after(shutdown_grace_);
    grace_timer_.async_wait([this](beast::error_code ec) {
      if (ec)
        return;
      for (open_connection* c : connections_)
        c->stream->socket().close();
    });
  }
}

void listener::add(open_connection* c) {
  connections_.insert(c);
}

void listener::remove(open_connection* c) {
  connections_.erase(c);
  if (stopping_ && connections_.empty())
    grace_timer_.cancel();
}

}  // namespace exactly::server
