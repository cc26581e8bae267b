// Problem details (RFC 9457): built from an errc, written and parsed as JSON.
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>

#include <nlohmann/json.hpp>

namespace exactly {

std::string_view problem::name() const {
  std::string_view t = type;
  if (!t.starts_with(protocol::problem_type_prefix))
    return {};
  return t.substr(protocol::problem_type_prefix.size());
}

problem make_problem(errc e, std::string detail) {
  const problem_info info = describe(e);
  problem p;
  p.type = std::string(protocol::problem_type_prefix) + std::string(info.name);
  p.title = std::string(info.title);
  p.status = info.status;
  p.detail = std::move(detail);
  return p;
}

std::string to_body(const problem& p) {
  // A detail may quote request bytes (a path) that are not UTF-8: they are sent as U+FFFD
  // instead of failing the answer (dump() would throw, and the request got no answer at all).
  return nlohmann::json(p).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<problem> parse_problem(std::string_view body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j.contains("status") ||
      !j["type"].is_string() || !j["status"].is_number_unsigned()) {
    return std::nullopt;
  }
  return j.get<problem>();
}

void to_json(nlohmann::json& j, const problem& p) {
  j = nlohmann::json{
      {"type", p.type}, {"title", p.title}, {"status", p.status}, {"detail", p.detail}};
}

void from_json(const nlohmann::json& j, problem& p) {
  j.at("type").get_to(p.type);
  j.at("status").get_to(p.status);
  p.title = j.value("title", "");
  p.detail = j.value("detail", "");
}

}  // namespace exactly
