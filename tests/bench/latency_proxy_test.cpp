// The benchmark's latency proxy (exactly-bench --postgres-delay-us): every byte passes through, in
// order, both ways, each held at least its delay; a close passes on; a libpq connection string is
// routed through it.

#include <http_client.hpp>
#include <latency_proxy.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A loopback server that echoes what one connection sends, then closes it at the end of it.
class echo_target {
 public:
  echo_target() : acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)) {
    thread_ = std::thread([this] {
      tcp::socket s(io_);
      acceptor_.accept(s);
      accepted_ = true;
      char buf[64 * 1024];
      boost::system::error_code ec;
      for (;;) {
        const std::size_t n = s.read_some(asio::buffer(buf), ec);
        if (ec)
          break;
        asio::write(s, asio::buffer(buf, n), ec);
        if (ec)
          break;
      }
      s.close(ec);
    });
  }
  ~echo_target() {
    if (!accepted_) {  // a test that ended before its connection: one that ends at once
      tcp::socket poke(io_);
      poke.connect(acceptor_.local_endpoint());
    }
    thread_.join();
  }
  int port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::atomic<bool> accepted_ = false;
  std::thread thread_;
};

constexpr int limit_ms = 10000;  // a broken proxy fails a test instead of hanging it

TEST(latency_proxy, a_round_trip_takes_at_least_twice_the_delay_and_returns_the_bytes_in_order) {
  echo_target target;
  const bench::latency_proxy proxy(target.port(), 20ms);
  raw_connection c(proxy.port());

  const auto sent = std::chrono::steady_clock::now();
  c.send("ping");
  EXPECT_EQ(c.read_exactly(4, limit_ms), "ping");
  EXPECT_GE(std::chrono::steady_clock::now() - sent, 40ms);  // held 20 ms each way

  // 4 MiB in one write, many chunks each way: every byte back, in order.
  std::string big(4 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  c.send(big);
  EXPECT_TRUE(c.read_exactly(big.size(), limit_ms) == big);
}

TEST(latency_proxy, a_close_passes_on_each_way_after_what_came_before_it) {
  echo_target target;
  const bench::latency_proxy proxy(target.port(), 5ms);
  raw_connection c(proxy.port());
  c.send("last words");
  c.shutdown_send();  // the target sees the end, echoes, then closes

  EXPECT_EQ(c.read_all(limit_ms), "last words");  // all that came, until the end or the limit
  EXPECT_TRUE(c.closed_within(limit_ms));         // the end
}

TEST(latency_proxy, routes_a_connection_string_by_its_port_keyword_alone) {
  echo_target target;
  const bench::latency_proxy proxy(target.port(), 1ms);
  const std::string t = std::to_string(target.port());
  const std::string p = std::to_string(proxy.port());
  EXPECT_EQ(proxy.route("host=127.0.0.1 port=" + t + " dbname=x"),
            "host=127.0.0.1 port=" + p + " dbname=x");
  EXPECT_EQ(proxy.route("dbname=x port=" + t), "dbname=x port=" + p);
  EXPECT_EQ(proxy.route("port=" + t), "port=" + p);
  // Another port, or the number inside another keyword's value: refused, nothing rewritten.
  EXPECT_THROW(proxy.route("host=127.0.0.1 port=1" + t), std::invalid_argument);
  EXPECT_THROW(proxy.route("host=127.0.0.1 dbname=port=" + t + "x"), std::invalid_argument);
  EXPECT_THROW(proxy.route("host=127.0.0.1"), std::invalid_argument);

  // The target serves one connection and ends with it: one through the proxy.
  raw_connection c(proxy.port());
  c.send("x");
  EXPECT_EQ(c.read_exactly(1, limit_ms), "x");
}

}  // namespace
}  // namespace exactly::test
