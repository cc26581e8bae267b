// The test-control interface over HTTP (see target.hpp).
#include "target.hpp"

#include <nlohmann/json.hpp>

namespace exactly::conformance {
namespace {

using json = nlohmann::json;

std::optional<std::int64_t> member(const std::optional<std::string>& body, const char* name) {
  if (!body)
    return std::nullopt;
  const json j = json::parse(*body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(name) || !j.at(name).is_number_integer())
    return std::nullopt;
  return j.at(name).get<std::int64_t>();
}

}  // namespace

http_controls::http_controls(endpoint at, std::string key)
    : conn_(std::move(at)), key_(std::move(key)) {}

std::optional<std::string> http_controls::call(const std::string& method, const std::string& path) {
  last_ = conn_.send(
      request{method, "/_exactly/test/" + path, {{"Authorization", "Bearer " + key_}}, ""});
  if (last_.status != 200)
    return std::nullopt;
  return last_.body;
}

std::optional<std::int64_t> http_controls::now_ms() {
  return member(call("GET", "clock"), "now_ms");
}

bool http_controls::advance_seconds(std::int64_t seconds) {
  return member(call("POST", "clock?advance_seconds=" + std::to_string(seconds)), "now_ms")
      .has_value();
}

bool http_controls::sweep() {
  return call("POST", "sweep").has_value();
}

std::optional<row_counts> http_controls::rows() {
  const auto body = call("GET", "rows");
  const auto s = member(body, "staged"), e = member(body, "executed"),
             t = member(body, "tombstone");
  if (!s || !e || !t)
    return std::nullopt;
  return row_counts{*s, *e, *t};
}

std::optional<std::int64_t> http_controls::executions(const std::string& id) {
  return member(call("GET", "executions/" + id), "executions");
}

bool http_controls::available(std::string& why) {
  if (now_ms())
    return true;
  why = "GET /_exactly/test/clock answered " + describe(last_);
  return false;
}

}  // namespace exactly::conformance
