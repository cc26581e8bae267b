// The HTTP server: composes authentication, TLS, routing, sessions, the listener, the storage
// threads and the background jobs, and runs their threads.
#include <exactly/server/http_server.hpp>

#include "access_log.hpp"
#include "authenticator.hpp"
#include "background_jobs.hpp"
#include "http_session.hpp"
#include "listener.hpp"
#include "metrics.hpp"
#include "request_dispatch.hpp"
#include "router.hpp"
#include "storage_lanes.hpp"
#include "tls_context.hpp"

#include <boost/asio/post.hpp>

#include <mutex>
#include <stdexcept>
#include <thread>

namespace exactly::server {

using namespace exactly::net;

namespace {

// `o`, or std::invalid_argument for a connection limit that would refuse every connection.
server_options validated(server_options o) {
  if (o.max_connections == 0 || o.max_tls_handshakes == 0) {
    throw std::invalid_argument(
        "http_server: max_connections and max_tls_handshakes must be at least 1");
  }
  return o;
}

}  // namespace

struct http_server::impl {
  impl(server_options o, connector& c)
      : opts(validated(std::move(o))),
        connector_(c),
        auth(opts),
        tls(make_tls_context(opts.tls)),
        storage(c, opts.group_commit, opts.flush_every_commit, opts.background_sync),
        jobs(storage.first(), c, opts.sweep_interval, opts.dispatch_interval),
        dispatch(c, auth, routes, counters, storage, opts),
        connections(net, opts.shutdown_grace, opts.max_connections,
                    [this] { counters.count_connection_refused(); }),
        log(opts.access_log.enabled ? std::make_unique<access_log>(opts.access_log) : nullptr),
        sessions{opts, tls.get(), dispatch, counters, connections, auth, log.get()} {}

  // Joins the threads once the network thread has ended (after a shutdown), then ends the
  // background jobs and the storage threads. Any thread but the server's.
  void join() {
    std::lock_guard lock(lifecycle);
    if (!started || joined)
      return;
    joined = true;
    if (net_thread.joinable())
      net_thread.join();
    storage.stop([this] { jobs.stop(); });
  }

  // Whether the threads run (run_on_storage() then posts to the storage thread).
  bool running() {
    std::lock_guard lock(lifecycle);
    return started && !joined;
  }

  server_options opts;
  connector& connector_;
  authenticator auth;
  std::unique_ptr<ssl::context> tls;  // null: plain http
  router routes;
  metrics counters;
  storage_lanes storage;  // one storage thread per connection of the connector
  background_jobs jobs;   // on the first storage thread
  request_dispatch dispatch;
  asio::io_context net{1};
  listener connections;             // on the network thread
  std::unique_ptr<access_log> log;  // null: off
  session_context sessions;
  std::thread net_thread;
  std::uint16_t bound_port = 0;

  std::mutex lifecycle;  // guards started/joined
  bool started = false, joined = false;
};

http_server::http_server(server_options opts, connector& c)
    : impl_(std::make_unique<impl>(std::move(opts), c)) {}

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
  s.bound_port = s.connections.bind(s.opts.host, s.opts.port);
  for (const std::string& r : s.connector_.routes())
    s.routes.add_connector_route(r);
  s.connections.start(
      [&s](tcp::socket socket) { return run_session(std::move(socket), s.sessions); });
  s.jobs.start();
  s.storage.start();
  s.net_thread = std::thread([&s] { s.net.run(); });
  s.started = true;
  return s.bound_port;
}

void http_server::shut_down_on_signals() {
  std::lock_guard lock(impl_->lifecycle);
  impl_->connections.shut_down_on_signals();
}

void http_server::run() {
  shut_down_on_signals();
  start();
  impl_->join();
}

void http_server::stop() {
  if (!impl_->running())
    return;
  asio::post(impl_->net, [s = impl_.get()] { s->connections.begin_shutdown(); });
  impl_->join();
}

std::uint16_t http_server::port() const {
  return impl_->bound_port;
}

std::string http_server::metrics_text() {
  std::string out;
  run_on_storage([&] { out = impl_->dispatch.render_metrics(); });
  return out;
}

void http_server::run_on_storage(std::function<void()> fn) {
  if (!impl_->running())
    return fn();
  impl_->storage.first().run_and_wait(std::move(fn));
}

}  // namespace exactly::server
