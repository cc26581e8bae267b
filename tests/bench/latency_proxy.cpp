// The latency proxy (see latency_proxy.hpp): per connection and direction, a reader that stamps
// each chunk with the time it may leave, and a writer that sends the chunks in order at those
// times.
#include "latency_proxy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <deque>
#include <stdexcept>
#include <thread>
#include <vector>

namespace exactly::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// One direction of one connection.
struct pipe_state {
  explicit pipe_state(asio::any_io_executor ex) : wake(ex, steady::time_point::max()) {}
  std::deque<std::pair<steady::time_point, std::vector<char>>> chunks;  // (may leave at, bytes)
  asio::steady_timer wake;  // the reader cancels it when a chunk arrives
  bool closed = false;      // the reader saw the end: the writer ends once it sent the rest
};

asio::awaitable<void> read_side(std::shared_ptr<tcp::socket> from, std::shared_ptr<pipe_state> p,
                                std::chrono::microseconds delay) {
  std::vector<char> buf(64 * 1024);
  for (;;) {
    auto [ec, n] = co_await from->async_read_some(asio::buffer(buf), use_tuple);
    if (ec)
      break;
    p->chunks.emplace_back(steady::now() + delay, std::vector<char>(buf.begin(), buf.begin() + n));
    p->wake.cancel();
  }
  p->closed = true;
  p->wake.cancel();
}

asio::awaitable<void> write_side(std::shared_ptr<tcp::socket> to, std::shared_ptr<pipe_state> p) {
  for (;;) {
    if (p->chunks.empty()) {
      if (p->closed)
        break;
      p->wake.expires_at(steady::time_point::max());
      co_await p->wake.async_wait(use_tuple);
      continue;
    }
    if (steady::now() < p->chunks.front().first) {
      p->wake.expires_at(p->chunks.front().first);
      co_await p->wake.async_wait(use_tuple);
      continue;
    }
    auto [ec, n] =
        co_await asio::async_write(*to, asio::buffer(p->chunks.front().second), use_tuple);
    if (ec)
      break;
    p->chunks.pop_front();
  }
  boost::system::error_code ignored;
  to->shutdown(tcp::socket::shutdown_send, ignored);
}

void pump(const std::shared_ptr<tcp::socket>& from, const std::shared_ptr<tcp::socket>& to,
          std::chrono::microseconds delay) {
  auto p = std::make_shared<pipe_state>(from->get_executor());
  asio::co_spawn(from->get_executor(), read_side(from, p, delay), asio::detached);
  asio::co_spawn(from->get_executor(), write_side(to, p), asio::detached);
}

}  // namespace

struct latency_proxy::impl {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  int target_port;
  std::chrono::microseconds delay;
  std::thread thread;

  asio::awaitable<void> accept() {
    for (;;) {
      auto client = std::make_shared<tcp::socket>(io);
      auto [ec] = co_await acceptor.async_accept(*client, use_tuple);
      if (ec)
        co_return;
      auto server = std::make_shared<tcp::socket>(io);
      auto [cec] =
          co_await server->async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                                       static_cast<unsigned short>(target_port)),
                                         use_tuple);
      if (cec)
        continue;  // the client sees its connection closed
      client->set_option(tcp::no_delay(true));
      server->set_option(tcp::no_delay(true));
      pump(client, server, delay);
      pump(server, client, delay);
    }
  }
};

latency_proxy::latency_proxy(int target_port, std::chrono::microseconds one_way)
    : impl_(std::make_unique<impl>()) {
  impl_->target_port = target_port;
  impl_->delay = one_way;
  asio::co_spawn(impl_->io, impl_->accept(), asio::detached);
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

latency_proxy::~latency_proxy() {
  impl_->io.stop();
  impl_->thread.join();
}

std::uint16_t latency_proxy::port() const {
  return impl_->acceptor.local_endpoint().port();
}

std::string latency_proxy::route(const std::string& conninfo) const {
  // The keyword alone, as a whole word: at the start or after a space, before a space or the end.
  const std::string from = "port=" + std::to_string(impl_->target_port);
  for (auto at = conninfo.find(from); at != std::string::npos; at = conninfo.find(from, at + 1)) {
    const auto end = at + from.size();
    if ((at == 0 || conninfo[at - 1] == ' ') && (end == conninfo.size() || conninfo[end] == ' '))
      return conninfo.substr(0, at) + "port=" + std::to_string(port()) + conninfo.substr(end);
  }
  throw std::invalid_argument("latency_proxy: no " + from + " in the connection string");
}

}  // namespace exactly::bench
