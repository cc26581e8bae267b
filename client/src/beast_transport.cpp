// The Beast transport: HTTP(S) exchanges as coroutines on one I/O thread, pooled per host.
#include <exactly/client/http_transport.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/url.hpp>

#include "asio_beast.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>

#include <deque>
#include <future>
#include <map>
#include <stdexcept>
#include <thread>

namespace exactly::client {
namespace {

using namespace exactly::net;

// One open connection, plain or TLS.
struct connection {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

// Connections and the in-flight count of one destination. Touched only on the I/O thread.
struct destination {
  std::deque<std::unique_ptr<connection>> idle;
  std::size_t active = 0;
  std::deque<asio::steady_timer*> waiting;  // woken (cancelled) when a slot frees up
};

http_result failure(std::string why) {
  http_result r;
  r.transport_failed = true;
  r.error = std::move(why);
  return r;
}

struct round_trip_result {
  http_result answer;
  bool reusable = false;  // answered, and the server keeps the connection open
};

using request = http::request<http::string_body>;

class beast_transport final : public http_transport {
 public:
  explicit beast_transport(beast_transport_options o)
      : opts_(std::move(o)), tls_(ssl::context::tls_client), work_(io_.get_executor()) {
    if (opts_.max_per_destination == 0)
      throw std::invalid_argument("max_per_destination must be at least 1");
    tls_.set_verify_mode(opts_.verify_peer ? ssl::verify_peer : ssl::verify_none);
    if (opts_.client_certificate_file.empty() != opts_.client_private_key_file.empty())
      throw std::invalid_argument("a client certificate needs both its file and its key file");
    try {
      if (!opts_.ca_file.empty())
        tls_.load_verify_file(opts_.ca_file);
      else
        tls_.set_default_verify_paths();
      if (!opts_.client_certificate_file.empty()) {
        tls_.use_certificate_chain_file(opts_.client_certificate_file);
        tls_.use_private_key_file(opts_.client_private_key_file, ssl::context::pem);
      }
    } catch (const boost::system::system_error& e) {
      throw std::invalid_argument(std::string("TLS files: ") + e.what());
    }
    thread_ = std::thread([this] { io_.run(); });
  }

  ~beast_transport() override {
    work_.reset();
    io_.stop();
    thread_.join();
  }

  http_result send(std::string_view method, std::string_view url, std::string_view content_type,
                   std::string_view body) override {
    return send_all({{std::string(method), std::string(url), std::string(content_type),
                      std::string(body)}})
        .front();
  }

  std::vector<http_result> send_all(const std::vector<http_call>& calls) override {
    for (const http_call& c : calls)  // throws for a bad URL before anything is sent
      check_url(c.url);
    std::vector<std::future<http_result>> started;
    started.reserve(calls.size());
    for (const http_call& c : calls)
      started.push_back(start(c));
    std::vector<http_result> answers;
    answers.reserve(calls.size());
    for (auto& f : started)
      answers.push_back(f.get());
    return answers;
  }

  void check_url(std::string_view url) const override { parse_http_url(url); }

  std::future<http_result> start(const http_call& call) override {
    http_url u = parse_http_url(call.url);
    auto req = make_request(u, call);
    auto answer = std::make_shared<std::promise<http_result>>();
    std::future<http_result> f = answer->get_future();
    const auto begun = std::chrono::steady_clock::now();  // waiting for a free slot included
    asio::co_spawn(io_, exchange(std::move(u), std::move(req)),
                   [answer, begun](std::exception_ptr e, http_result r) {
                     if (e) {
                       answer->set_exception(e);
                       return;
                     }
                     r.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now() - begun);
                     answer->set_value(std::move(r));
                   });
    return f;
  }

 private:
  std::shared_ptr<request> make_request(const http_url& u, const http_call& c) const {
    auto req = std::make_shared<request>();
    req->method_string(c.method);
    req->target(u.target);
    req->version(11);
    const std::string host = u.authority();
    req->set(http::field::host, host);
    for (const auto& d : opts_.keys) {
      if (d.host_port == host)
        req->set(http::field::authorization, "Bearer " + d.bearer);
    }
    if (!c.content_type.empty())
      req->set(http::field::content_type, c.content_type);
    for (const auto& [name, value] : c.headers)
      req->set(name, value);
    req->body() = c.body;
    req->prepare_payload();
    return req;
  }

  asio::awaitable<http_result> exchange(http_url u, std::shared_ptr<request> req) {
    destination& d = destinations_[u.origin()];
    while (d.active >= opts_.max_per_destination) {
      asio::steady_timer wait(io_, asio::steady_timer::time_point::max());
      d.waiting.push_back(&wait);
      co_await wait.async_wait(use_tuple);  // cancelled by release()
    }
    ++d.active;
    http_result r = co_await exchange_in_slot(u, *req, d);
    --d.active;
    if (!d.waiting.empty()) {
      d.waiting.front()->cancel();
      d.waiting.pop_front();
    }
    co_return r;
  }

  asio::awaitable<http_result> exchange_in_slot(const http_url& u,
                                                const http::request<http::string_body>& req,
                                                destination& d) {
    // A kept-alive connection may have been closed by the server meanwhile: a request that
    // failed on a reused connection is sent once more on a fresh one.
    while (!d.idle.empty()) {
      std::unique_ptr<connection> c = std::move(d.idle.front());
      d.idle.pop_front();
      if (auto r = co_await round_trip(*c, req); !r.answer.transport_failed) {
        keep(d, std::move(c), r.reusable);
        co_return std::move(r.answer);
      }
    }
    std::unique_ptr<connection> c;
    if (auto error = co_await connect(u, c); !error.empty())
      co_return failure(std::move(error));
    auto r = co_await round_trip(*c, req);
    keep(d, std::move(c), r.reusable);
    co_return std::move(r.answer);
  }

  void keep(destination& d, std::unique_ptr<connection> c, bool reusable) {
    if (reusable && d.idle.size() < opts_.max_per_destination)
      d.idle.push_back(std::move(c));
  }

  // Opens `c` to `u` (TCP, then TLS for https); returns why it failed, "" on success.
  asio::awaitable<std::string> connect(const http_url& u, std::unique_ptr<connection>& c) {
    tcp::resolver resolver(io_);
    auto [rec, endpoints] =
        co_await resolver.async_resolve(u.host, std::to_string(u.port), use_tuple);
    if (rec)
      co_return "resolve " + u.host + ": " + rec.message();
    c = std::make_unique<connection>();
    if (u.https)
      c->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io_, tls_);
    else
      c->plain = std::make_unique<beast::tcp_stream>(io_);
    beast::tcp_stream& s = c->lowest();
    s.expires_after(opts_.connect_timeout);
    auto [cec, ep] = co_await s.async_connect(endpoints, use_tuple);
    if (cec)
      co_return "connect: " + cec.message();
    beast::error_code ignored;
    s.socket().set_option(tcp::no_delay(true), ignored);
    if (c->tls) {
      // Server names are host names: an address literal sends none (RFC 6066, section 3).
      if (!u.ip_address && !SSL_set_tlsext_host_name(c->tls->native_handle(), u.host.c_str()))
        co_return "TLS: cannot set the server name";
      if (opts_.verify_peer)
        c->tls->set_verify_callback(ssl::host_name_verification(u.host));
      auto [hec] = co_await c->tls->async_handshake(ssl::stream_base::client, use_tuple);
      if (hec)
        co_return "TLS handshake: " + hec.message();
    }
    co_return std::string();
  }

  asio::awaitable<round_trip_result> round_trip(connection& c,
                                                const http::request<http::string_body>& req) {
    c.lowest().expires_after(opts_.request_timeout);
    http::response<http::string_body> res;
    beast::error_code ec;
    if (c.tls) {
      std::tie(ec, std::ignore) = co_await http::async_write(*c.tls, req, use_tuple);
      if (!ec)
        std::tie(ec, std::ignore) = co_await http::async_read(*c.tls, c.buffer, res, use_tuple);
    } else {
      std::tie(ec, std::ignore) = co_await http::async_write(*c.plain, req, use_tuple);
      if (!ec)
        std::tie(ec, std::ignore) = co_await http::async_read(*c.plain, c.buffer, res, use_tuple);
    }
    if (ec)
      co_return round_trip_result{failure(ec.message()), false};
    round_trip_result r;
    r.answer.status = res.result_int();
    r.answer.content_type = std::string(res[http::field::content_type]);
    r.answer.outcome = std::string(res[protocol::outcome_header]);
    r.answer.retention = std::string(res[protocol::retention_header]);
    r.answer.body = std::move(res.body());
    r.reusable = res.keep_alive();
    co_return r;
  }

  beast_transport_options opts_;
  asio::io_context io_;
  ssl::context tls_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::map<std::string, destination> destinations_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<http_transport> make_beast_transport(beast_transport_options opts) {
  return std::make_unique<beast_transport>(std::move(opts));
}

std::string url_authority(std::string_view url) {
  return parse_http_url(url).authority();
}

}  // namespace exactly::client
