// Answers one HTTP request by its route (see request_dispatch.hpp).
#include "request_dispatch.hpp"

#include <exactly/common/protocol.hpp>

#include "authenticator.hpp"
#include "background_jobs.hpp"
#include "metrics.hpp"
#include "router.hpp"
#include "storage_executor.hpp"

namespace exactly::server {
namespace {

using namespace exactly::net;

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

// The path of a request target, without its query.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// What a user route's handler sees of `req` (whose body it takes).
http_request user_request(beast_request& req, std::map<std::string, std::string> params,
                          std::string principal) {
  const std::string_view target = to_view(req.target());
  const auto qpos = target.find('?');
  http_request in;
  in.method = std::string(to_view(req.method_string()));
  in.path = std::string(target.substr(0, qpos));
  if (qpos != std::string_view::npos)
    in.query = std::string(target.substr(qpos + 1));
  for (const auto& f : req)
    in.headers.emplace_back(f.name_string(), f.value());
  in.body = std::move(req.body());
  in.principal = std::move(principal);
  in.params = std::move(params);
  return in;
}

}  // namespace

request_dispatch::request_dispatch(connector& c, const authenticator& auth, const router& routes,
                                   metrics& counters, storage_executor& storage,
                                   bool metrics_need_key)
    : connector_(c),
      auth_(auth),
      routes_(routes),
      counters_(counters),
      storage_(storage),
      metrics_need_key_(metrics_need_key) {}

beast_response request_dispatch::reply(interaction_response r, unsigned version) {
  if (r.problem)
    counters_.count_problem(*r.problem);
  return to_beast(std::move(r), version);
}

std::string request_dispatch::render_metrics() {
  return counters_.render(connector_.stats(), connector_.counts(), connector_.outbox_pending(),
                          connector_.dead_letters(), storage_.group_counts());
}

asio::awaitable<beast_response> request_dispatch::respond(beast_request& req,
                                                          const std::string& certificate_sha256) {
  const unsigned version = req.version();
  const std::string_view path = path_of(to_view(req.target()));
  const std::string_view method = to_view(req.method_string());

  if (method == "GET" && path == "/healthz") {
    // Not ready while the store is unreachable (PostgreSQL down): a balancer sends elsewhere.
    if (!connector_.ready()) {
      return answered(
          to_beast(http_response{503, "text/plain", "storage unavailable\n", {}}, version));
    }
    return answered(to_beast(http_response{200, "text/plain", "ok\n", {}}, version));
  }
  const bool metrics_wanted = method == "GET" && path == "/metrics";
  if (metrics_wanted && !metrics_need_key_)
    return metrics_page(version);

  route_match m = routes_.match(method, path);
  const bool needs_auth = !(m.matched == route_match::kind::user && !m.user->authenticated);
  std::optional<std::string> principal = std::string();
  if (needs_auth)
    principal = auth_.principal_of(to_view(req[http::field::authorization]), certificate_sha256);
  if (!principal) {
    auto res = reply(problem_response(errc::unauthorized, "a valid API key is required"), version);
    res.set(http::field::www_authenticate, "Bearer");
    return answered(std::move(res));
  }
  if (metrics_wanted)
    return metrics_page(version);

  switch (m.matched) {
    case route_match::kind::none:
      return answered(
          reply(problem_response(errc::not_found, "no route for " + std::string(path)), version));
    case route_match::kind::method_not_allowed: {
      auto res = reply(
          problem_response(errc::method_not_allowed, std::string(method) + " is not allowed here"),
          version);
      res.set(http::field::allow, m.allow);
      return answered(std::move(res));
    }
    case route_match::kind::user:
      return user_route(req, std::move(m), std::move(*principal));
    case route_match::kind::connector:
      break;
  }
  return connector_route(req, std::move(m), std::move(*principal));
}

asio::awaitable<beast_response> request_dispatch::answered(beast_response res) {
  co_return res;
}

asio::awaitable<beast_response> request_dispatch::metrics_page(unsigned version) {
  std::string text = co_await storage_.run([this] { return render_metrics(); });
  co_return to_beast(http_response{200, "text/plain; version=0.0.4", std::move(text), {}}, version);
}

asio::awaitable<beast_response> request_dispatch::user_route(beast_request& req, route_match m,
                                                             std::string principal) {
  const unsigned version = req.version();
  const http_request in = user_request(req, std::move(m.params), std::move(principal));
  auto [failure, out] = co_await storage_.run_in_commit_group(
      [&handler = m.user->handler, &in] { return handler(in); });
  if (failure) {
    co_return reply(
        failure_response(failure, errc::execution_failed, "route " + in.method + " " + in.path,
                         "the route handler failed"),
        version);
  }
  if (!out)
    co_return reply(problem_response(errc::storage_unavailable), version);
  co_return to_beast(std::move(*out), version);
}

asio::awaitable<beast_response> request_dispatch::connector_route(beast_request& req, route_match m,
                                                                  std::string principal) {
  const interaction_request ir{to_verb(req.method()),
                               m.route_template,
                               m.id,
                               principal,
                               to_view(req[http::field::content_type]),
                               req.body()};
  if (ir.v == verb::get && connector_.has_separate_reads()) {
    // Committed rows only, so no commit group to wait for: read here, answered at once.
    co_return reply(connector_.read(ir), req.version());
  }
  auto [failure, durable] =
      co_await storage_.run_in_commit_group([this, &ir] { return connector_.handle(ir); },
                                            /*own_savepoint=*/false);  // handle() has its own
  if (failure)  // connector::handle() answers its failures: this is a defect
    co_return reply(failure_response(failure, errc::internal_error, ir.route), req.version());
  if (!durable)
    co_return reply(problem_response(errc::storage_unavailable), req.version());
  co_return reply(std::move(*durable), req.version());
}

}  // namespace exactly::server
