// The one place that turns an outcome into an answer (see respond.hpp).
#include "respond.hpp"

#include <exactly/common/http_date.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/storage_error.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace exactly::server {
namespace {

using namespace exactly::net;

// The standard detail of a problem, "" for those whose detail is always given.
std::string_view standard_detail(errc e) {
  switch (e) {
    case errc::invalid_request_id:
      return "the id is not a canonical UUIDv7 within the accepted time";
    case errc::request_too_old:
      return "the id's timestamp is older than the acceptance window";
    case errc::request_mismatch:
      return "the id is staged with a different body or content type";
    case errc::request_consumed:
      return "the id was already used and can never be staged again";
    case errc::request_expired:
      return "the staged request expired before it was executed; it never ran";
    case errc::request_unknown:
      return "no such request";
    case errc::not_executed:
      return "the request is staged but has not been executed";
    case errc::response_expired:
      return "the stored response passed its retention and was dropped";
    case errc::too_many_staged:
      return "too many staged requests for this principal";
    case errc::execution_failed:
      return "the business logic failed; nothing was committed and the request stays staged, "
             "so it may be retried";
    case errc::storage_unavailable:
      return "storage failed; nothing was committed, the request may be retried";
    case errc::internal_error:
      return "the server failed; nothing was committed";
    default:
      return "";
  }
}

beast_response make_response(unsigned status, std::string_view content_type, std::string body,
                             unsigned version) {
  beast_response res{static_cast<http::status>(status), version};
  if (!content_type.empty())
    res.set(http::field::content_type, content_type);
  res.body() = std::move(body);
  return res;
}

}  // namespace

interaction_response problem_response(errc e, std::string detail) {
  const problem p = make_problem(e, std::move(detail));
  return {p.status, std::string(protocol::problem_content_type), to_body(p), "", e, std::nullopt};
}

interaction_response problem_response(errc e) {
  return problem_response(e, std::string(standard_detail(e)));
}

interaction_response failure_response(std::exception_ptr e, errc otherwise,
                                      std::string_view context, std::string detail) {
  std::string what = "an exception of unknown type";
  bool storage = false;
  try {
    std::rethrow_exception(e);
  } catch (const storage_error& x) {
    what = x.what();
    storage = x.storage_failure();
  } catch (const std::exception& x) {
    what = x.what();
  } catch (...) {
  }
  if (storage) {
    spdlog::error("storage failure on {}: {}", context, what);
    return problem_response(errc::storage_unavailable);
  }
  if (otherwise == errc::internal_error)
    spdlog::error("defect on {}: {}", context, what);
  else
    spdlog::warn("{} failed, nothing committed: {}", context, what);
  if (detail.empty())
    return problem_response(otherwise);
  return problem_response(otherwise, std::move(detail));
}

beast_response to_beast(interaction_response r, unsigned version) {
  beast_response res = make_response(r.status, r.content_type, std::move(r.body), version);
  if (!r.outcome.empty())
    res.set(protocol::outcome_header, r.outcome);
  // A time beyond the year 9999 is stated as its end: earlier, so the promise still holds.
  if (r.available_until_ms) {
    res.set(protocol::retention_header,
            format_http_date(std::min(*r.available_until_ms, max_http_date_ms)));
  }
  if (r.problem == errc::too_many_staged)  // room comes back as the principal's POSTs land
    res.set(http::field::retry_after, "1");
  return res;
}

beast_response to_beast(http_response r, unsigned version) {
  beast_response res = make_response(r.status, r.content_type, std::move(r.body), version);
  for (auto& [name, value] : r.headers)
    res.set(name, value);
  return res;
}

}  // namespace exactly::server
