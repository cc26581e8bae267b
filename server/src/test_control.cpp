// The test-control interface (see test_control.hpp).
#include "test_control.hpp"

#include "respond.hpp"

#include <exactly/common/request_id.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <stdexcept>

namespace exactly::server {
namespace {

interaction_response json_answer(const nlohmann::json& j) {
  return interaction_response{200, "application/json", j.dump(), "", std::nullopt, std::nullopt};
}

// The value of `name` in the query string `query`, or nullopt.
std::optional<std::string_view> query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
        pair[name.size()] == '=')
      return pair.substr(name.size() + 1);
    if (amp == std::string_view::npos)
      break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace

test_control_page::test_control_page(test_control_options o, const std::vector<api_key>& api_keys,
                                     connector& c)
    : opts_(std::move(o)), connector_(c) {
  if (opts_.key.empty())
    return;
  if (!opts_.clock)
    throw std::invalid_argument("http_server: test_control needs a clock with its key");
  if (opts_.key.size() < 16)
    throw std::invalid_argument(
        "http_server: the test-control key must have at least 16 characters");
  for (const api_key& k : api_keys) {
    if (k.key == opts_.key)
      throw std::invalid_argument(
          "http_server: the test-control key must not be an API key (principal " + k.principal +
          ")");
  }
}

bool test_control_page::handles(std::string_view path) const {
  return !opts_.key.empty() && path.substr(0, test_control_prefix.size()) == test_control_prefix;
}

bool test_control_page::authorized(std::string_view authorization) const {
  constexpr std::string_view scheme = "Bearer ";
  if (authorization.substr(0, scheme.size()) != scheme)
    return false;
  const std::string_view given = authorization.substr(scheme.size());
  unsigned char diff = given.size() == opts_.key.size() ? 0 : 1;
  for (std::size_t i = 0; i < opts_.key.size(); ++i)
    diff |= static_cast<unsigned char>(opts_.key[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

interaction_response test_control_page::answer(std::string_view method, std::string_view path,
                                               std::string_view query) {
  const std::string_view what = path.substr(test_control_prefix.size());
  if (what == "clock" && method == "GET")
    return json_answer({{"now_ms", opts_.clock->now_ms()}});
  if (what == "clock" && method == "POST") {
    const auto text = query_value(query, "advance_seconds");
    std::int64_t seconds = -1;
    const char* end = text ? text->data() + text->size() : nullptr;
    const auto parsed = text ? std::from_chars(text->data(), end, seconds)
                             : std::from_chars_result{nullptr, std::errc::invalid_argument};
    if (parsed.ec != std::errc() || parsed.ptr != end || seconds < 0 ||
        seconds > max_advance_seconds)
      return problem_response(
          errc::bad_request, "advance_seconds=N (0 <= N <= " + std::to_string(max_advance_seconds) +
                                 ", 100 years) is required");
    if (!opts_.clock->advance_ms(seconds * 1000))
      return problem_response(errc::bad_request,
                              "the clock has been moved 100 years forward already: no further");
    return json_answer({{"now_ms", opts_.clock->now_ms()}});
  }
  if (what == "sweep" && method == "POST") {
    const sweep_result r = connector_.sweep();
    return json_answer({{"expired_staged", r.expired_staged},
                        {"expired_responses", r.expired_responses},
                        {"purged_tombstones", r.purged_tombstones}});
  }
  if (what == "rows" && method == "GET") {
    const state_counts r = connector_.counts();
    return json_answer(
        {{"staged", r.staged}, {"executed", r.executed}, {"tombstone", r.tombstone}});
  }
  constexpr std::string_view executions = "executions/";
  if (what.substr(0, executions.size()) == executions && method == "GET") {
    const std::string id(what.substr(executions.size()));
    if (!request_id::parse(id))
      return problem_response(errc::invalid_request_id);
    const auto n = opts_.executions ? opts_.executions(id) : std::nullopt;
    if (!n)
      return problem_response(errc::not_found, "this server cannot count executions");
    return json_answer({{"executions", *n}});
  }
  return problem_response(errc::not_found, "no test-control endpoint " + std::string(path));
}

}  // namespace exactly::server
