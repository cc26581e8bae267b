#pragma once
// The protocol's error codes, their boost::system category, and the ONE mapping to HTTP.

#include <boost/system/error_code.hpp>

#include <string_view>
#include <type_traits>

namespace exactly {

// Every protocol-level error the server can answer with. Values are stable.
enum class errc {
  invalid_request_id = 1,
  request_too_old,
  request_mismatch,
  request_consumed,
  request_expired,
  request_unknown,
  not_executed,
  response_expired,
  payload_too_large,
  invalid_payload,
  too_many_staged,
  execution_failed,
  storage_unavailable,
  unauthorized,
  method_not_allowed,
  not_found,
  header_too_large,
  bad_request,
  internal_error,  // a bug: never a storage failure, never the business logic's refusal
};

// The category of exactly::errc; name() is "exactly".
const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

// How an error appears on the wire.
struct problem_info {
  unsigned status;         // HTTP status code
  std::string_view name;   // problem name, the suffix of its type URN
  std::string_view title;  // short human-readable summary
};

// The one mapping from an error to its HTTP status and problem name. Total over errc.
problem_info describe(errc e) noexcept;

// All values of errc, for exhaustive tests and documentation.
inline constexpr errc all_errc[] = {
    errc::invalid_request_id,  errc::request_too_old,  errc::request_mismatch,
    errc::request_consumed,    errc::request_expired,  errc::request_unknown,
    errc::not_executed,        errc::response_expired, errc::payload_too_large,
    errc::invalid_payload,     errc::too_many_staged,  errc::execution_failed,
    errc::storage_unavailable, errc::unauthorized,     errc::method_not_allowed,
    errc::not_found,           errc::header_too_large, errc::bad_request,
    errc::internal_error,
};

}  // namespace exactly

template <>
struct boost::system::is_error_code_enum<exactly::errc> : std::true_type {};
