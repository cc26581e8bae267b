#include <exactly/common/crash_point.hpp>
#include <exactly/common/digest.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/server/http_server.hpp>

#include "commit_group.hpp"
#include "metrics.hpp"
#include "router.hpp"

#include <spdlog/spdlog.h>
#include "asio_beast.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cctype>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace exactly::server {
namespace {

using namespace exactly::net;
using beast_request = http::request<http::string_body>;
using beast_response = http::response<http::string_body>;

void log_exception(std::exception_ptr e) {
  if (!e)
    return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    spdlog::error("background task failed: {}", x.what());
  }
}

std::string_view to_view(beast::string_view s) {
  return {s.data(), s.size()};
}

verb to_verb(http::verb v) {
  switch (v) {
    case http::verb::put:
      return verb::put;
    case http::verb::post:
      return verb::post;
    case http::verb::delete_:
      return verb::delete_;
    default:
      return verb::get;
  }
}

// "AB:cd:..." or "abcd..." as 64 lowercase hex digits; throws for anything else.
std::string normalized_sha256(std::string_view text) {
  std::string hex;
  for (const char c : text) {
    if (c == ':')
      continue;
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      throw std::invalid_argument("client certificate fingerprint: not hex: " + std::string(text));
    hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (hex.size() != 64)
    throw std::invalid_argument("client certificate fingerprint: not 32 bytes: " +
                                std::string(text));
  return hex;
}

// The SHA-256 of the DER encoding of the peer's certificate, as 64 lowercase hex digits; "" when
// it sent none.
std::string peer_certificate_sha256(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert)
    return {};
  unsigned char* der = nullptr;
  const int len = i2d_X509(cert, &der);
  X509_free(cert);
  if (len <= 0)
    return {};
  std::string hex =
      to_hex(sha256({reinterpret_cast<const char*>(der), static_cast<std::size_t>(len)}));
  OPENSSL_free(der);
  return hex;
}

// The server's TLS context from `o`; throws std::invalid_argument when a file does not load.
std::unique_ptr<ssl::context> make_tls_context(const tls_options& o) {
  if (o.private_key_file.empty())
    throw std::invalid_argument("http_server: tls.private_key_file is required with a certificate");
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  try {
    ctx->use_certificate_chain_file(o.certificate_chain_file);
    ctx->use_private_key_file(o.private_key_file, ssl::context::pem);
    if (!o.client_ca_file.empty()) {
      ctx->load_verify_file(o.client_ca_file);
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      // Without a session id context, OpenSSL fails the handshake of a client that resumes a
      // session when client certificates are verified, instead of starting a fresh one.
      static constexpr unsigned char context[] = "exactly";
      SSL_CTX_set_session_id_context(ctx->native_handle(), context, sizeof context - 1);
    }
  } catch (const boost::system::system_error& e) {
    throw std::invalid_argument(std::string("http_server: TLS files: ") + e.what());
  }
  return ctx;
}

}  // namespace

std::string_view http_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (beast::iequals(k, name))
      return v;
  }
  return {};
}

struct http_server::impl {
  impl(server_options o, connector& c) : opts(std::move(o)), conn(c) {
    if (!opts.open_mode && opts.api_keys.empty() && opts.tls.client_certificates.empty()) {
      throw std::invalid_argument(
          "http_server: configure api_keys or tls.client_certificates, or set open_mode "
          "explicitly for an unauthenticated server");
    }
    for (const api_key& k : opts.api_keys)
      principals[k.key] = k.principal;
    const tls_options& t = opts.tls;
    if (t.certificate_chain_file.empty() &&
        (!t.private_key_file.empty() || !t.client_ca_file.empty())) {
      throw std::invalid_argument("http_server: TLS settings need tls.certificate_chain_file");
    }
    if (!t.client_certificates.empty() && t.client_ca_file.empty())
      throw std::invalid_argument("http_server: tls.client_certificates need tls.client_ca_file");
    for (const client_certificate& cc : t.client_certificates)
      certificate_principals[normalized_sha256(cc.sha256_hex)] = cc.principal;
    if (!t.certificate_chain_file.empty())
      tls = make_tls_context(t);
  }

  struct connection_state {
    beast::tcp_stream* stream;
    bool busy = false;
  };

  server_options opts;
  connector& conn;
  router routes;
  metrics counters;
  std::map<std::string, std::string, std::less<>> principals;  // key -> principal
  std::map<std::string, std::string> certificate_principals;   // sha256 hex -> principal
  std::unique_ptr<ssl::context> tls;                           // null: plain http

  asio::io_context net{1};
  asio::io_context storage{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> storage_work;
  tcp::acceptor acceptor{net};
  std::optional<asio::signal_set> signals;
  asio::steady_timer grace_timer{net};
  asio::steady_timer sweep_timer{storage};
  asio::steady_timer dispatch_timer{storage};
  commit_groups groups{storage, conn.db(), opts.group_commit};  // storage thread only
  std::thread net_thread, storage_thread;
  std::uint16_t bound_port = 0;

  std::mutex lifecycle;  // guards started/joined
  bool started = false, joined = false;
  bool stopping = false;                    // network thread only
  bool storage_stopping = false;            // storage thread only
  std::set<connection_state*> connections;  // network thread only

  // ---- storage thread ----

  template <class F>
  asio::awaitable<std::invoke_result_t<F>> on_storage(F fn) {
    using R = std::invoke_result_t<F>;
    co_return co_await asio::co_spawn(
        storage, [fn = std::move(fn)]() mutable -> asio::awaitable<R> { co_return fn(); },
        asio::use_awaitable);
  }

  // Runs `fn` on the storage thread in the open commit group; nullopt when the group could not
  // be made durable. Rethrows what `fn` throws.
  template <class F>
  asio::awaitable<std::optional<std::invoke_result_t<F>>> durably(F fn) {
    co_return co_await asio::co_spawn(storage, groups.run(std::move(fn)), asio::use_awaitable);
  }

  asio::awaitable<void> run_sweeper() {
    for (;;) {
      sweep_timer.expires_after(opts.sweep_interval);
      co_await sweep_timer.async_wait(use_tuple);
      if (storage_stopping)
        co_return;
      try {
        const sweep_result r = conn.sweep();
        if (r.expired_staged + r.expired_responses + r.purged_tombstones > 0) {
          spdlog::info("sweeper: {} staged expired, {} responses expired, {} tombstones purged",
                       r.expired_staged, r.expired_responses, r.purged_tombstones);
        }
      } catch (const std::exception& e) {
        spdlog::error("sweeper failed: {}", e.what());
      }
    }
  }

  asio::awaitable<void> run_dispatcher() {
    constexpr int batch = 64;
    for (;;) {
      std::size_t handled = 0;
      try {
        handled = conn.dispatch_outbox(batch);
      } catch (const std::exception& e) {
        spdlog::error("outbox dispatch failed: {}", e.what());
      }
      if (storage_stopping)
        co_return;
      if (handled == batch) {
        co_await asio::post(storage, asio::use_awaitable);  // let requests in between
        continue;
      }
      dispatch_timer.expires_after(opts.dispatch_interval);
      co_await dispatch_timer.async_wait(use_tuple);  // cancelled by a fresh execution
      if (storage_stopping)
        co_return;
    }
  }

  // ---- network thread ----

  beast_response make_response(unsigned status, std::string_view content_type, std::string body,
                               unsigned version) {
    beast_response res{static_cast<http::status>(status), version};
    if (!content_type.empty())
      res.set(http::field::content_type, content_type);
    res.body() = std::move(body);
    return res;
  }

  beast_response problem_reply(errc e, std::string detail, unsigned version) {
    counters.count_problem(e);
    const problem p = make_problem(e, std::move(detail));
    return make_response(p.status, protocol::problem_content_type, to_body(p), version);
  }

  // Authenticates: the connection's client certificate when it names a principal, else the API
  // key; nullopt means 401.
  std::optional<std::string> principal_of(const beast_request& req,
                                          const std::string& certificate_sha256) const {
    if (!certificate_sha256.empty()) {
      if (const auto it = certificate_principals.find(certificate_sha256);
          it != certificate_principals.end()) {
        return it->second;
      }
    }
    if (opts.open_mode)
      return std::string();
    const std::string_view auth = to_view(req[http::field::authorization]);
    constexpr std::string_view scheme = "Bearer ";
    if (auth.size() <= scheme.size() || !beast::iequals(auth.substr(0, scheme.size()), scheme)) {
      return std::nullopt;
    }
    const auto it = principals.find(auth.substr(scheme.size()));
    if (it == principals.end())
      return std::nullopt;
    return it->second;
  }

  asio::awaitable<beast_response> respond(beast_request& req,
                                          const std::string& certificate_sha256) {
    const unsigned version = req.version();
    const std::string_view target = to_view(req.target());
    const auto qpos = target.find('?');
    const std::string_view path = target.substr(0, qpos);
    const std::string_view method = to_view(req.method_string());

    if (method == "GET" && path == "/healthz")
      co_return make_response(200, "text/plain", "ok\n", version);
    if (method == "GET" && path == "/metrics") {
      std::string text = co_await on_storage([this] { return render_metrics(); });
      co_return make_response(200, "text/plain; version=0.0.4", std::move(text), version);
    }

    route_match m = routes.match(method, path);
    const bool needs_auth = !(m.k == route_match::kind::user && !m.user->authenticated);
    std::optional<std::string> principal = std::string();
    if (needs_auth)
      principal = principal_of(req, certificate_sha256);
    if (!principal) {
      auto res = problem_reply(errc::unauthorized, "a valid API key is required", version);
      res.set(http::field::www_authenticate, "Bearer");
      co_return res;
    }

    switch (m.k) {
      case route_match::kind::none:
        co_return problem_reply(errc::not_found, "no route for " + std::string(path), version);
      case route_match::kind::method_not_allowed: {
        auto res = problem_reply(errc::method_not_allowed,
                                 std::string(method) + " is not allowed here", version);
        res.set(http::field::allow, m.allow);
        co_return res;
      }
      case route_match::kind::user: {
        http_request in;
        in.method = std::string(method);
        in.path = std::string(path);
        if (qpos != std::string_view::npos)
          in.query = std::string(target.substr(qpos + 1));
        for (const auto& f : req)
          in.headers.emplace_back(f.name_string(), f.value());
        in.body = std::move(req.body());
        in.principal = std::move(*principal);
        in.params = std::move(m.params);
        const route_handler& handler = m.user->handler;
        std::optional<http_response> out;
        try {
          out = co_await durably([&handler, &in] { return handler(in); });
          if (!out) {
            co_return problem_reply(errc::storage_unavailable,
                                    "storage failed; nothing was committed", version);
          }
        } catch (const std::exception& e) {
          spdlog::error("route {} {} failed: {}", in.method, in.path, e.what());
        }
        if (!out)
          co_return problem_reply(errc::execution_failed, "the route handler failed", version);
        auto res = make_response(out->status, out->content_type, std::move(out->body), version);
        for (auto& [k, v] : out->headers)
          res.set(k, v);
        co_return res;
      }
      case route_match::kind::connector:
        break;
    }

    const std::string_view content_type = to_view(req[http::field::content_type]);
    const interaction_request ir{to_verb(req.method()), m.route_template, m.id, *principal,
                                 content_type,          req.body()};
    std::optional<interaction_response> durable;
    try {
      if (ir.v == verb::get && conn.reads_apart()) {
        // Committed rows only, so no commit group to wait for: read here, answered at once.
        durable = conn.read(ir);
      } else {
        durable = co_await durably([this, &ir] {
          interaction_response r = conn.handle(ir);
          if (r.outcome == protocol::outcome_executed) {
            groups.after_commit([this] {
              crash_point("server.after_commit_before_reply");
              dispatch_timer.cancel();  // wake the dispatcher
            });
          }
          return r;
        });
      }
    } catch (const std::exception& e) {
      spdlog::error("storage failure on {} {}: {}", m.route_template, m.id, e.what());
    }
    if (!durable) {
      co_return problem_reply(errc::storage_unavailable,
                              "storage failed; nothing was committed, the request may be retried",
                              version);
    }
    interaction_response& out = *durable;
    if (out.problem)
      counters.count_problem(*out.problem);
    auto res = make_response(out.status, out.content_type, std::move(out.body), version);
    if (!out.outcome.empty())
      res.set(protocol::outcome_header, out.outcome);
    co_return res;
  }

  std::string render_metrics() {
    return counters.render(conn.stats(), conn.counts(), conn.outbox_pending(), conn.dead_letters(),
                           groups.stats());
  }

  // Sends `res` and closes: half-close, then drain what the peer still sends (briefly), so the
  // peer reads the answer instead of a reset.
  template <class Stream>
  asio::awaitable<void> reply_and_close(Stream& stream, beast_response res) {
    res.keep_alive(false);
    res.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(opts.write_timeout);
    co_await http::async_write(stream, res, use_tuple);
    beast::error_code ec;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ec);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(1));
    char sink[4096];
    for (int i = 0; i < 1024; ++i) {
      auto [e, n] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
      if (e)
        break;
    }
  }

  asio::awaitable<void> run_session(tcp::socket socket) {
    if (stopping)
      co_return;  // accepted just before the shutdown began: closed unserved
    if (!tls) {
      beast::tcp_stream stream(std::move(socket));
      connection_state state{&stream};
      co_await serve(stream, state, std::string());
      co_return;
    }
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
    connection_state state{&beast::get_lowest_layer(stream)};
    connections.insert(&state);  // a shutdown cancels a handshake like an idle connection
    beast::get_lowest_layer(stream).expires_after(opts.tls.handshake_timeout);
    auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, use_tuple);
    connections.erase(&state);
    if (ec) {
      if (!stopping)  // a handshake cut short by the shutdown is not the client's failure
        counters.count_tls_handshake_failure();
      beast::error_code ignored;
      beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
      if (stopping && connections.empty())
        grace_timer.cancel();
      co_return;
    }
    co_await serve(stream, state, peer_certificate_sha256(stream.native_handle()));
  }

  // Serves requests on `stream` until the peer leaves, a limit is hit or the server stops.
  // `certificate_sha256`: the client certificate of a TLS connection, "" when none.
  template <class Stream>
  asio::awaitable<void> serve(Stream& stream, connection_state& state,
                              std::string certificate_sha256) {
    beast::tcp_stream& lowest = beast::get_lowest_layer(stream);
    connections.insert(&state);
    beast::flat_buffer buffer;
    bool first = true;
    while (!stopping) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(opts.max_header_bytes));
      parser.body_limit(opts.max_body_bytes);
      lowest.expires_after(first || buffer.size() > 0 ? opts.read_timeout : opts.idle_timeout);
      first = false;
      auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
      state.busy = true;
      if (!ec && beast::iequals(to_view(parser.get()[http::field::expect]), "100-continue")) {
        http::response<http::empty_body> cont{http::status::continue_, parser.get().version()};
        lowest.expires_after(opts.write_timeout);
        std::tie(ec, n) = co_await http::async_write(stream, cont, use_tuple);
      }
      if (!ec && !parser.is_done()) {
        lowest.expires_after(opts.read_timeout);
        std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, use_tuple);
      }
      const auto started = std::chrono::steady_clock::now();
      if (ec == http::error::body_limit) {
        co_await reply_and_close(
            stream, problem_reply(
                        errc::payload_too_large,
                        "the body exceeds " + std::to_string(opts.max_body_bytes) + " bytes", 11));
        break;
      }
      if (ec == http::error::header_limit) {
        co_await reply_and_close(
            stream,
            problem_reply(errc::header_too_large,
                          "the header exceeds " + std::to_string(opts.max_header_bytes) + " bytes",
                          11));
        break;
      }
      if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
          ec == asio::error::operation_aborted || ec == asio::error::eof ||
          ec == asio::error::connection_reset || ec == http::error::partial_message ||
          ec == ssl::error::stream_truncated) {
        break;  // peer left, too slow, or shutting down: close without an answer
      }
      if (ec) {
        co_await reply_and_close(stream, problem_reply(errc::bad_request, ec.message(), 11));
        break;
      }

      beast_request req = parser.release();
      beast_response res = co_await respond(req, certificate_sha256);
      const bool keep = req.keep_alive() && !stopping;
      res.keep_alive(keep);
      res.prepare_payload();
      if (res.result() == http::status::no_content)
        res.erase(http::field::content_length);
      lowest.expires_after(opts.write_timeout);
      auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
      counters.observe_request(
          res.result_int(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      state.busy = false;
      if (wec || !keep)
        break;
    }
    beast::error_code ignored;
    lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
    connections.erase(&state);
    if (stopping && connections.empty())
      grace_timer.cancel();
  }

  asio::awaitable<void> run_acceptor() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
      if (stopping || ec == asio::error::operation_aborted)
        co_return;
      if (ec) {
        spdlog::warn("accept failed: {}", ec.message());
        grace_timer.expires_after(std::chrono::milliseconds(50));
        co_await grace_timer.async_wait(use_tuple);
        continue;
      }
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      asio::co_spawn(net, run_session(std::move(socket)), log_exception);
    }
  }

  void begin_shutdown() {  // network thread
    if (stopping)
      return;
    stopping = true;
    beast::error_code ignored;
    acceptor.close(ignored);
    if (signals)
      signals->cancel(ignored);
    for (connection_state* c : connections) {
      if (!c->busy)
        c->stream->socket().cancel(ignored);  // idle keep-alive: close now
    }
    if (!connections.empty()) {
      grace_timer.expires_after(opts.shutdown_grace);
      grace_timer.async_wait([this](beast::error_code ec) {
        if (ec)
          return;
        for (connection_state* c : connections)
          c->stream->socket().close();
      });
    }
  }

  void join() {  // any thread but the two of the server
    std::lock_guard lock(lifecycle);
    if (!started || joined)
      return;
    joined = true;
    if (net_thread.joinable())
      net_thread.join();
    asio::post(storage, [this] {
      storage_stopping = true;
      sweep_timer.cancel();
      dispatch_timer.cancel();
      storage_work.reset();
    });
    if (storage_thread.joinable())
      storage_thread.join();
  }
};

http_server::http_server(server_options opts, connector& c)
    : impl_(std::make_shared<impl>(std::move(opts), c)) {}

http_server::~http_server() {
  stop();
}

void http_server::add_route(std::string method, std::string pattern, route_handler handler,
                            bool authenticated) {
  impl_->routes.add_user_route(std::move(method), pattern, std::move(handler), authenticated);
}

std::uint16_t http_server::start() {
  impl& s = *impl_;
  std::lock_guard lock(s.lifecycle);
  if (s.started)
    return s.bound_port;
  const tcp::endpoint ep(asio::ip::make_address(s.opts.host), s.opts.port);
  s.acceptor.open(ep.protocol());
  s.acceptor.set_option(asio::socket_base::reuse_address(true));
  s.acceptor.bind(ep);
  s.acceptor.listen(asio::socket_base::max_listen_connections);
  s.bound_port = s.acceptor.local_endpoint().port();
  for (const std::string& r : s.conn.routes())
    s.routes.add_connector_route(r);
  asio::co_spawn(s.net, s.run_acceptor(), log_exception);
  s.storage_work.emplace(s.storage.get_executor());
  asio::co_spawn(s.storage, s.run_sweeper(), log_exception);
  asio::co_spawn(s.storage, s.run_dispatcher(), log_exception);
  s.storage_thread = std::thread([&s] { s.storage.run(); });
  s.net_thread = std::thread([&s] { s.net.run(); });
  s.started = true;
  return s.bound_port;
}

void http_server::run() {
  impl& s = *impl_;
  {
    std::lock_guard lock(s.lifecycle);
    s.signals.emplace(s.net, SIGINT, SIGTERM);
    s.signals->async_wait([&s](beast::error_code ec, int sig) {
      if (ec)
        return;
      spdlog::info("signal {}: shutting down gracefully", sig);
      s.begin_shutdown();
    });
  }
  start();
  s.join();
}

void http_server::stop() {
  {
    std::lock_guard lock(impl_->lifecycle);
    if (!impl_->started || impl_->joined)
      return;
    asio::post(impl_->net, [s = impl_.get()] { s->begin_shutdown(); });
  }
  impl_->join();
}

std::uint16_t http_server::port() const {
  return impl_->bound_port;
}

std::string http_server::metrics_text() {
  std::string out;
  run_on_storage([&] { out = impl_->render_metrics(); });
  return out;
}

void http_server::run_on_storage(std::function<void()> fn) {
  bool running;
  {
    std::lock_guard lock(impl_->lifecycle);
    running = impl_->started && !impl_->joined;
  }
  if (!running)
    return fn();
  std::promise<void> done;
  asio::post(impl_->storage, [&] {
    try {
      fn();
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  done.get_future().get();
}

}  // namespace exactly::server
