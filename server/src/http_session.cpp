// One connection's read / respond / write loop, with its limits and close (http_session.hpp).
#include "http_session.hpp"

#include "access_log.hpp"
#include "authenticator.hpp"
#include "listener.hpp"
#include "metrics.hpp"
#include "request_dispatch.hpp"
#include "tls_context.hpp"

#include <exactly/common/crash_point.hpp>
#include <exactly/common/protocol.hpp>

#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <string>

namespace exactly::server {
namespace {

using namespace exactly::net;

// Sends `res` and closes: half-close, then drain what the peer still sends (briefly), so the
// peer reads the answer instead of a reset.
template <class Stream>
asio::awaitable<void> reply_and_close(Stream& stream, beast_response res,
                                      const server_options& opts) {
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

// The problem that refuses a request which could not be read, or nullopt when the connection
// just closes without an answer (the peer left, was too slow, or the server is stopping).
std::optional<interaction_response> read_failure(beast::error_code ec, const server_options& opts) {
  if (ec == http::error::body_limit) {
    return problem_response(errc::payload_too_large,
                            "the body exceeds " + std::to_string(opts.max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit) {
    return problem_response(
        errc::header_too_large,
        "the header exceeds " + std::to_string(opts.max_header_bytes) + " bytes");
  }
  if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == http::error::partial_message ||
      ec == ssl::error::stream_truncated) {
    return std::nullopt;
  }
  return problem_response(errc::bad_request, ec.message());
}

// The refusal of a header this server does not read a body after: HTTP/1.1 without Host, or a
// Transfer-Encoding whose last coding is not chunked (its length unknown: a request smuggled
// behind a proxy that reads it otherwise). nullopt when the header is acceptable.
std::optional<interaction_response> malformed_header(const beast_request& header, bool chunked) {
  if (header.version() >= 11 && header.find(http::field::host) == header.end())
    return problem_response(errc::bad_request, "an HTTP/1.1 request needs a Host header");
  if (header.find(http::field::transfer_encoding) != header.end() && !chunked) {
    return problem_response(errc::bad_request,
                            "the last Transfer-Encoding must be chunked, the only one read here");
  }
  return std::nullopt;
}

// The peer of `s` as "address:port" ("[address]:port" for IPv6), "" when unknown.
std::string remote_of(tcp::socket& s) {
  beast::error_code ec;
  const auto ep = s.remote_endpoint(ec);
  if (ec)
    return {};
  const std::string address = ep.address().to_string();
  const std::string port = std::to_string(ep.port());
  return ep.address().is_v6() ? "[" + address + "]:" + port : address + ":" + port;
}

// Writes the access log line of `req` answered with `res` since `begun`, when there is a log.
void log_request(session_context& ctx, const std::string& remote,
                 const std::string& certificate_sha256, const beast_request& req,
                 const beast_response& res, std::chrono::steady_clock::time_point begun) {
  if (!ctx.log)
    return;
  const auto authorization = to_view(req[http::field::authorization]);
  const std::string principal =
      ctx.auth.principal_of(authorization, certificate_sha256).value_or(std::string());
  ctx.log->write({.remote = remote,
                  .principal = principal,
                  .method = to_view(req.method_string()),
                  .target = to_view(req.target()),
                  .status = res.result_int(),
                  .bytes = res.body().size(),
                  .duration = std::chrono::steady_clock::now() - begun,
                  .outcome = to_view(res[protocol::outcome_header])});
}

// Serves requests on `stream` until the peer leaves, a limit is hit or the server stops.
// `certificate_sha256`: the client certificate of a TLS connection, "" when none.
// Deadlines: a kept-alive connection may wait idle_timeout for the first byte of its next
// request; from that byte (from the start of the connection for its first request) the whole
// request, header and body, must arrive within read_timeout.
template <class Stream>
asio::awaitable<void> serve(Stream& stream, open_connection& state, std::string certificate_sha256,
                            session_context& ctx) {
  const server_options& opts = ctx.opts;
  beast::tcp_stream& lowest = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  const std::string remote = ctx.log ? remote_of(lowest.socket()) : std::string();
  bool first = true;
  while (!ctx.connections.stopping()) {
    if (!first && buffer.size() == 0) {
      lowest.expires_after(opts.idle_timeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(1024), use_tuple);
      buffer.commit(n);
      if (ec)
        break;  // the peer left, stayed idle, or the server is stopping: no answer
    }
    first = false;
    const auto deadline = std::chrono::steady_clock::now() + opts.read_timeout;
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(opts.max_header_bytes));
    parser.body_limit(boost::none);  // the Content-Length is judged after authentication
    lowest.expires_at(deadline);
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
    const auto begun = std::chrono::steady_clock::now();
    state.busy = true;
    std::optional<beast_response> early;  // an answer known before the body is read
    if (!ec) {
      if (auto bad = malformed_header(parser.get(), parser.chunked())) {
        auto res = ctx.dispatch.reply(std::move(*bad), 11);
        log_request(ctx, remote, certificate_sha256, parser.get(), res, begun);
        co_await reply_and_close(stream, std::move(res), opts);
        break;
      }
      std::optional<std::uint64_t> length;
      if (const auto cl = parser.content_length())
        length = *cl;
      early = ctx.dispatch.refuse_before_body(parser.get(), certificate_sha256, length,
                                              opts.max_body_bytes);
      if (early && !parser.is_done()) {  // never read the body of a refused request
        log_request(ctx, remote, certificate_sha256, parser.get(), *early, begun);
        co_await reply_and_close(stream, std::move(*early), opts);
        break;
      }
      parser.body_limit(opts.max_body_bytes);
    }
    if (!ec && !early &&
        beast::iequals(to_view(parser.get()[http::field::expect]), "100-continue")) {
      http::response<http::empty_body> cont{http::status::continue_, parser.get().version()};
      lowest.expires_after(opts.write_timeout);
      std::tie(ec, n) = co_await http::async_write(stream, cont, use_tuple);
    }
    if (!ec && !parser.is_done()) {
      lowest.expires_at(deadline);
      std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, use_tuple);
    }
    const auto started = std::chrono::steady_clock::now();
    if (ec) {
      if (auto refusal = read_failure(ec, opts)) {
        auto res = ctx.dispatch.reply(std::move(*refusal), 11);
        log_request(ctx, remote, certificate_sha256, parser.get(), res, begun);
        co_await reply_and_close(stream, std::move(res), opts);
      }
      break;
    }

    beast_request req = parser.release();
    beast_response res;  // not a ?: around co_await: GCC 12 miscompiles that
    if (early)
      res = std::move(*early);
    else
      res = co_await ctx.dispatch.respond(req, certificate_sha256);
    const bool keep = req.keep_alive() && !ctx.connections.stopping();
    res.keep_alive(keep);
    res.prepare_payload();
    if (res.result() == http::status::no_content)
      res.erase(http::field::content_length);
    lowest.expires_after(opts.write_timeout);
    auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
    if (!wec && req.method() == http::verb::put && res.result() == http::status::created)
      crash_point("server.after_put_answered");  // a 201 out; the staged row may be unflushed
    ctx.counters.observe_request(
        res.result_int(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    log_request(ctx, remote, certificate_sha256, req, res, begun);
    state.busy = false;
    if (wec || !keep)
      break;
  }
  beast::error_code ignored;
  lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace

asio::awaitable<void> run_session(tcp::socket socket, session_context& ctx) {
  if (ctx.connections.stopping())
    co_return;  // accepted just before the shutdown began: closed unserved
  if (!ctx.tls) {
    beast::tcp_stream stream(std::move(socket));
    open_connection state{&stream};
    const connection_registration registered(ctx.connections, &state);
    co_await serve(stream, state, std::string(), ctx);
    co_return;
  }
  if (ctx.tls_handshakes >= ctx.opts.max_tls_handshakes) {  // CPU-bound: closed at once
    ctx.counters.count_tls_handshake_refused();
    beast::error_code ignored;
    socket.close(ignored);
    co_return;
  }
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *ctx.tls);
  open_connection state{&beast::get_lowest_layer(stream)};
  // Registered before the handshake: a shutdown cancels a handshake like an idle connection.
  const connection_registration registered(ctx.connections, &state);
  beast::get_lowest_layer(stream).expires_after(ctx.opts.tls.handshake_timeout);
  ++ctx.tls_handshakes;
  auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, use_tuple);
  --ctx.tls_handshakes;
  if (ec) {
    if (!ctx.connections.stopping())  // a handshake cut short by the shutdown is not a failure
      ctx.counters.count_tls_handshake_failure();
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
    co_return;
  }
  co_await serve(stream, state, peer_certificate_sha256(stream.native_handle()), ctx);
}

}  // namespace exactly::server
