// One connection's read / respond / write loop, with its limits and close (http_session.hpp).
#include "http_session.hpp"

#include "listener.hpp"
#include "metrics.hpp"
#include "request_dispatch.hpp"
#include "tls_context.hpp"

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

// Serves requests on `stream` until the peer leaves, a limit is hit or the server stops.
// `certificate_sha256`: the client certificate of a TLS connection, "" when none.
template <class Stream>
asio::awaitable<void> serve(Stream& stream, open_connection& state, std::string certificate_sha256,
                            session_context& ctx) {
  const server_options& opts = ctx.opts;
  beast::tcp_stream& lowest = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  bool first = true;
  while (!ctx.connections.stopping()) {
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
    if (ec) {
      if (auto refusal = read_failure(ec, opts))
        co_await reply_and_close(stream, ctx.dispatch.reply(std::move(*refusal), 11), opts);
      break;
    }

    beast_request req = parser.release();
    beast_response res = co_await ctx.dispatch.respond(req, certificate_sha256);
    const bool keep = req.keep_alive() && !ctx.connections.stopping();
    res.keep_alive(keep);
    res.prepare_payload();
    if (res.result() == http::status::no_content)
      res.erase(http::field::content_length);
    lowest.expires_after(opts.write_timeout);
    auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
    ctx.counters.observe_request(
        res.result_int(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
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
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *ctx.tls);
  open_connection state{&beast::get_lowest_layer(stream)};
  // Registered before the handshake: a shutdown cancels a handshake like an idle connection.
  const connection_registration registered(ctx.connections, &state);
  beast::get_lowest_layer(stream).expires_after(ctx.opts.tls.handshake_timeout);
  auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, use_tuple);
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
