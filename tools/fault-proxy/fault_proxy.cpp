#include "fault_proxy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>

namespace exactly::tools {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

}  // namespace

struct fault_proxy::impl {
  explicit impl(fault_options o) : opts(std::move(o)), rng(opts.seed) {}

  fault_options opts;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::mt19937_64 rng;  // io thread only
  mutable std::mutex counts_mutex;
  fault_counts counts;
  bool started = false;
  std::size_t next_upstream = 0;  // round robin over the upstreams (the proxy's one thread)

  bool roll(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  void count(std::uint64_t fault_counts::*field) {
    std::lock_guard lock(counts_mutex);
    ++(counts.*field);
  }

  // Connects `up` to the next upstream in turn, trying the others when it refuses; false if none
  // accepts.
  asio::awaitable<bool> connect_upstream(beast::tcp_stream& up) {
    std::vector<std::pair<std::string, std::uint16_t>> all = {
        {opts.upstream_host, opts.upstream_port}};
    all.insert(all.end(), opts.more_upstreams.begin(), opts.more_upstreams.end());
    const std::size_t first = next_upstream++;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto& [host, port] = all[(first + i) % all.size()];
      up.expires_after(std::chrono::seconds(5));
      const tcp::endpoint to(asio::ip::make_address(host), port);
      if (auto [ec] = co_await up.async_connect(to, use_tuple); !ec)
        co_return true;
      beast::error_code ignored;
      up.socket().close(ignored);  // the next connect opens it again
    }
    co_return false;
  }

  // Sends `req` upstream and reads the answer; false if the upstream failed.
  asio::awaitable<bool> exchange(beast::tcp_stream& up, beast::flat_buffer& buf,
                                 http::request<http::string_body>& req,
                                 http::response<http::string_body>& res) {
    up.expires_after(std::chrono::seconds(30));
    auto [wec, wn] = co_await http::async_write(up, req, use_tuple);
    if (wec)
      co_return false;
    res = {};
    auto [rec, rn] = co_await http::async_read(up, buf, res, use_tuple);
    co_return !rec;
  }

  asio::awaitable<void> run_connection(tcp::socket client_socket) {
    beast::tcp_stream client(std::move(client_socket));
    beast::tcp_stream up(io);
    beast::flat_buffer cbuf, ubuf;
    if (!co_await connect_upstream(up))
      co_return;
    for (;;) {
      http::request<http::string_body> req;
      client.expires_after(std::chrono::seconds(60));
      if (auto [ec, n] = co_await http::async_read(client, cbuf, req, use_tuple); ec)
        co_return;
      count(&fault_counts::requests);
      if (roll(opts.drop_request)) {
        count(&fault_counts::dropped_requests);
        co_return;  // the request never reaches the server
      }
      if (roll(opts.delay)) {
        count(&fault_counts::delays);
        asio::steady_timer t(io, std::chrono::milliseconds(opts.delay_ms));
        co_await t.async_wait(use_tuple);
      }
      http::response<http::string_body> res;
      if (roll(opts.duplicate)) {
        count(&fault_counts::duplicates);
        auto copy = req;
        if (!co_await exchange(up, ubuf, copy, res))
          co_return;
      }
      if (!co_await exchange(up, ubuf, req, res))
        co_return;
      if (roll(opts.drop_response)) {
        count(&fault_counts::dropped_responses);
        co_return;  // the server acted; the client never hears of it
      }
      if (roll(opts.reset)) {
        count(&fault_counts::resets);
        beast::error_code ignored;
        client.socket().set_option(asio::socket_base::linger(true, 0), ignored);
        client.socket().close(ignored);  // RST
        co_return;
      }
      const bool keep = res.keep_alive() && req.keep_alive();
      client.expires_after(std::chrono::seconds(30));
      if (auto [ec, n] = co_await http::async_write(client, res, use_tuple); ec || !keep)
        co_return;
    }
  }

  asio::awaitable<void> run_acceptor() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
      if (ec)
        co_return;
      asio::co_spawn(io, run_connection(std::move(socket)), asio::detached);
    }
  }
};

fault_proxy::fault_proxy(fault_options opts) : impl_(std::make_unique<impl>(std::move(opts))) {}

fault_proxy::~fault_proxy() {
  stop();
}

std::uint16_t fault_proxy::start() {
  impl& s = *impl_;
  const tcp::endpoint ep(asio::ip::make_address(s.opts.listen_host), s.opts.listen_port);
  s.acceptor.open(ep.protocol());
  s.acceptor.set_option(asio::socket_base::reuse_address(true));
  s.acceptor.bind(ep);
  s.acceptor.listen();
  asio::co_spawn(s.io, s.run_acceptor(), asio::detached);
  s.thread = std::thread([&s] { s.io.run(); });
  s.started = true;
  return s.acceptor.local_endpoint().port();
}

void fault_proxy::stop() {
  if (!impl_->started)
    return;
  impl_->started = false;
  impl_->io.stop();
  impl_->thread.join();
}

fault_counts fault_proxy::counts() const {
  std::lock_guard lock(impl_->counts_mutex);
  return impl_->counts;
}

}  // namespace exactly::tools
