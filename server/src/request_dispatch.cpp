// Answers one HTTP request by its route (see request_dispatch.hpp).
#include "request_dispatch.hpp"

#include <exactly/common/protocol.hpp>
#include <exactly/common/request_id.hpp>

#include "authenticator.hpp"
#include "background_jobs.hpp"
#include "metrics.hpp"
#include "router.hpp"
#include "storage_lanes.hpp"

namespace exactly::server {
namespace {

using namespace exactly::net;

// The path of a request target, without its query.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// The query of a request target, without its '?'; "" when it has none.
std::string_view query_of(std::string_view target) {
  const auto qpos = target.find('?');
  return qpos == std::string_view::npos ? std::string_view() : target.substr(qpos + 1);
}

// What a user route's handler sees of `req` (whose body it takes).
http_request user_request(beast_request& req, std::map<std::string, std::string> params,
                          std::string principal) {
  const std::string_view target = to_view(req.target());
  http_request in;
  in.method = std::string(to_view(req.method_string()));
  in.path = std::string(path_of(target));
  in.query = std::string(query_of(target));
  for (const auto& f : req)
    in.headers.emplace_back(f.name_string(), f.value());
  in.body = std::move(req.body());
  in.principal = std::move(principal);
  in.params = std::move(params);
  return in;
}

}  // namespace

request_dispatch::request_dispatch(connector& c, const authenticator& auth, const router& routes,
                                   metrics& counters, storage_lanes& storage,
                                   const server_options& opts)
    : connector_(c),
      auth_(auth),
      routes_(routes),
      counters_(counters),
      storage_(storage),
      metrics_need_key_(opts.metrics_need_key),
      metrics_max_age_(opts.metrics_max_age),
      test_control_(opts.test_control, opts.api_keys, c),
      operator_page_(opts.operator_page, opts.api_keys, opts.test_control.key) {}

request_dispatch::~request_dispatch() = default;

beast_response request_dispatch::reply(interaction_response r, unsigned version) {
  if (r.problem)
    counters_.count_problem(*r.problem);
  return to_beast(std::move(r), version);
}

storage_figures request_dispatch::read_figures() {
  return storage_figures{connector_.stats(), connector_.counts(), connector_.outbox_pending(),
                         connector_.dead_letters()};
}

std::string request_dispatch::render_metrics() {
  return counters_.render(read_figures(), storage_.group_counts());
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
  if (method == "GET" && path == "/metrics") {
    if (auto refusal = refuse_metrics(req, certificate_sha256))
      return answered(std::move(*refusal));
    return metrics_page(version);
  }
  if (operator_page_.handles(path)) {
    if (!operator_page_.authorized(to_view(req[http::field::authorization])))
      return answered(operator_unauthorized(version));
    return operator_page_answer(req);
  }
  if (test_control_.handles(path)) {
    if (!test_control_.authorized(to_view(req[http::field::authorization])))
      return answered(unauthorized(version));
    return test_control_answer(req);
  }

  auto admitted = admit(req, certificate_sha256);
  if (auto* refusal = std::get_if<beast_response>(&admitted))
    return answered(std::move(*refusal));
  auto& [m, principal] = std::get<admission>(admitted);
  if (m.matched == route_match::kind::user)
    return user_route(req, std::move(m), std::move(principal));
  return connector_route(req, std::move(m), std::move(principal));
}

std::variant<beast_response, request_dispatch::admission> request_dispatch::admit(
    const beast_request& req, const std::string& certificate_sha256) {
  const unsigned version = req.version();
  const std::string_view path = path_of(to_view(req.target()));
  const std::string_view method = to_view(req.method_string());
  route_match m = routes_.match(method, path);
  const bool needs_auth = !(m.matched == route_match::kind::user && !m.user->authenticated);
  std::optional<std::string> principal = std::string();
  if (needs_auth)
    principal = auth_.principal_of(to_view(req[http::field::authorization]), certificate_sha256);
  if (!principal)
    return unauthorized(version);
  switch (m.matched) {
    case route_match::kind::none:
      return reply(problem_response(errc::not_found, "no route for " + std::string(path)), version);
    case route_match::kind::method_not_allowed: {
      auto res = reply(
          problem_response(errc::method_not_allowed, std::string(method) + " is not allowed here"),
          version);
      res.set(http::field::allow, m.allow);
      return res;
    }
    case route_match::kind::user:
      break;
    case route_match::kind::connector:
      if (!request_id::parse(m.id)) {
        return reply(problem_response(errc::invalid_request_id,
                                      "the id must be a canonical lowercase UUID version 7"),
                     version);
      }
      break;
  }
  return admission{std::move(m), std::move(*principal)};
}

std::optional<beast_response> request_dispatch::refuse_before_body(
    const beast_request& header, const std::string& certificate_sha256,
    std::optional<std::uint64_t> content_length, std::size_t max_body_bytes) {
  const std::string_view path = path_of(to_view(header.target()));
  const bool own_page = header.method() == http::verb::get &&
                        (path == "/healthz" || path == "/metrics");  // no authentication
  if (own_page && path == "/metrics") {
    if (auto refusal = refuse_metrics(header, certificate_sha256))
      return refusal;
  } else if (operator_page_.handles(path)) {
    if (!operator_page_.authorized(to_view(header[http::field::authorization])))
      return operator_unauthorized(header.version());
  } else if (test_control_.handles(path)) {
    if (!test_control_.authorized(to_view(header[http::field::authorization])))
      return unauthorized(header.version());
  } else if (!own_page) {
    auto admitted = admit(header, certificate_sha256);
    if (auto* refusal = std::get_if<beast_response>(&admitted))
      return std::move(*refusal);
  }
  if (content_length && *content_length > max_body_bytes) {
    return reply(problem_response(errc::payload_too_large,
                                  "the body exceeds " + std::to_string(max_body_bytes) + " bytes"),
                 header.version());
  }
  return std::nullopt;
}

beast_response request_dispatch::unauthorized(unsigned version) {
  auto res = reply(problem_response(errc::unauthorized, "a valid API key is required"), version);
  res.set(http::field::www_authenticate, "Bearer");
  return res;
}

beast_response request_dispatch::operator_unauthorized(unsigned version) {
  auto res =
      reply(problem_response(errc::unauthorized, "the operator page's key is required"), version);
  res.set(http::field::www_authenticate, "Basic realm=\"exactly\"");
  return res;
}

std::optional<beast_response> request_dispatch::refuse_metrics(
    const beast_request& req, const std::string& certificate_sha256) {
  if (metrics_need_key_ &&
      !auth_.principal_of(to_view(req[http::field::authorization]), certificate_sha256)) {
    return unauthorized(req.version());
  }
  return std::nullopt;
}

asio::awaitable<beast_response> request_dispatch::answered(beast_response res) {
  co_return res;
}

asio::awaitable<beast_response> request_dispatch::metrics_page(unsigned version) {
  using std::chrono::steady_clock;
  const auto asked_at = steady_clock::now();
  const bool stale = !figures_ || asked_at - figures_read_at_ >= metrics_max_age_;
  // A scrape with nothing to show yet, or with max age 0, reads for itself; the others show the
  // last reading while one is under way, so scrape loops cost the storage thread at most one
  // reading per max age.
  const bool must_read = !figures_ || metrics_max_age_.count() == 0;
  if (stale && (must_read || !reading_figures_)) {
    reading_figures_ = true;
    struct reading_done {
      bool& flag;
      ~reading_done() { flag = false; }
    } done{reading_figures_};
    auto read = co_await storage_.first().run([this] { return read_figures(); });
    figures_ = std::make_unique<storage_figures>(read);
    figures_read_at_ = asked_at;
  }
  // The commit groups' counts and times are kept in memory: shown as they are now.
  std::string text = counters_.render(*figures_, storage_.group_counts());
  co_return to_beast(http_response{200, "text/plain; version=0.0.4", std::move(text), {}}, version);
}

asio::awaitable<beast_response> request_dispatch::test_control_answer(beast_request& req) {
  const unsigned version = req.version();
  const std::string_view target = to_view(req.target());
  const std::string path(path_of(target));
  const std::string query(query_of(target));
  const std::string method(to_view(req.method_string()));
  interaction_response r = co_await storage_.first().run([&] {
    try {
      return test_control_.answer(method, path, query);
    } catch (...) {
      return failure_response(std::current_exception(), errc::internal_error, path);
    }
  });
  co_return reply(std::move(r), version);
}

asio::awaitable<beast_response> request_dispatch::operator_page_answer(beast_request& req) {
  const unsigned version = req.version();
  const std::string_view target = to_view(req.target());
  const std::string path(path_of(target));
  const std::string query(query_of(target));
  const std::string method(to_view(req.method_string()));
  const auto uptime =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_);
  auto [page, failure] = co_await storage_.first().run(
      [&]() -> std::pair<http_response, std::optional<interaction_response>> {
        try {
          return {operator_page_.answer(method, path, query, connector_.storage(), read_figures(),
                                        connector_.options().clock(), uptime),
                  std::nullopt};
        } catch (...) {
          return {
              {},
              failure_response(std::current_exception(), errc::internal_error, "operator page")};
        }
      });
  if (failure)
    co_return reply(std::move(*failure), version);
  co_return to_beast(std::move(page), version);
}

asio::awaitable<beast_response> request_dispatch::user_route(beast_request& req, route_match m,
                                                             std::string principal) {
  const unsigned version = req.version();
  const http_request in = user_request(req, std::move(m.params), std::move(principal));
  auto [failure, out] = co_await storage_.next().run_in_commit_group(
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

}  // namespace exactly::server
