// How the runtime reads a server's answer: class, text, and a response kept in message headers.
#include "http_answers.hpp"

#include <exactly/common/http_date.hpp>
#include <exactly/common/problem.hpp>

namespace exactly::client {

answer_class classify(const http_result& r) {
  std::string problem;  // only a 410's problem changes its class
  if (!r.transport_failed && r.status == 410 && r.outcome.empty()) {
    if (const auto p = parse_problem(r.body))
      problem = p->name();
  }
  return classify(r.transport_failed, r.status, !r.outcome.empty(), problem);
}

lifecycle_event answer_event(const http_result& r) {
  return answer_event(classify(r));
}

std::string describe_answer(std::string_view method, const http_result& r) {
  if (r.transport_failed)
    return std::string(method) + " failed: " + r.error;
  std::string s = std::string(method) + " answered " + std::to_string(r.status);
  if (const auto p = parse_problem(r.body))
    s += " " + std::string(p->name()) + ": " + p->detail;
  return s;
}

std::optional<std::int64_t> available_until(const http_result& r) {
  if (r.retention.empty())
    return std::nullopt;
  return parse_http_date(r.retention);
}

nlohmann::json keep_response(nlohmann::json headers, const http_result& response) {
  headers[kept_response_header] = {{"status", response.status},
                                   {"content_type", response.content_type},
                                   {"outcome", response.outcome},
                                   {"body", response.body},
                                   {"retention", response.retention}};
  return headers;
}

std::optional<http_result> kept_response(const nlohmann::json& headers) {
  const auto kept = headers.find(kept_response_header);
  if (kept == headers.end())
    return std::nullopt;
  http_result r;
  r.status = kept->at("status").get<unsigned>();
  r.content_type = kept->at("content_type").get<std::string>();
  r.outcome = kept->at("outcome").get<std::string>();
  r.body = kept->at("body").get<std::string>();
  r.retention = kept->value("retention", "");  // absent from responses kept by older versions
  return r;
}

}  // namespace exactly::client
