// The errc category and the one mapping of an error to its HTTP status and problem name.
#include <exactly/common/error.hpp>

#include <string>

namespace exactly {
namespace {

class category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "exactly"; }
  std::string message(int ev) const override {
    return std::string(describe(static_cast<errc>(ev)).title);
  }
};

}  // namespace

const boost::system::error_category& error_category() noexcept {
  static const category_impl instance;
  return instance;
}

problem_info describe(errc e) noexcept {
  switch (e) {
    case errc::invalid_request_id:
      return {400, "invalid-request-id", "Invalid request id"};
    case errc::request_too_old:
      return {410, "request-too-old", "Request id too old"};
    case errc::request_mismatch:
      return {409, "request-mismatch", "Request mismatch"};
    case errc::request_consumed:
      return {410, "request-consumed", "Request consumed"};
    case errc::request_expired:
      return {410, "request-expired", "Request expired"};
    case errc::request_unknown:
      return {404, "request-unknown", "Request unknown"};
    case errc::not_executed:
      return {409, "not-executed", "Request not executed"};
    case errc::response_expired:
      return {410, "response-expired", "Response expired"};
    case errc::payload_too_large:
      return {413, "payload-too-large", "Payload too large"};
    case errc::invalid_payload:
      return {422, "invalid-payload", "Invalid payload"};
    case errc::too_many_staged:
      return {429, "too-many-staged", "Too many staged requests"};
    case errc::execution_failed:
      return {500, "execution-failed", "Execution failed"};
    case errc::storage_unavailable:
      return {503, "storage-unavailable", "Storage unavailable"};
    case errc::unauthorized:
      return {401, "unauthorized", "Unauthorized"};
    case errc::method_not_allowed:
      return {405, "method-not-allowed", "Method not allowed"};
    case errc::not_found:
      return {404, "not-found", "Not found"};
    case errc::header_too_large:
      return {431, "header-too-large", "Header too large"};
    case errc::bad_request:
      return {400, "bad-request", "Bad request"};
    case errc::internal_error:
      return {500, "internal-error", "Internal error"};
  }
  return {500, "internal", "Internal error"};
}

}  // namespace exactly
