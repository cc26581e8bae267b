#pragma once
// Problem details (RFC 9457) as sent in every protocol-level error.

#include <exactly/common/error.hpp>

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace exactly {

struct problem {
  std::string type;     // urn:exactly-once:problem:<name>
  std::string title;    // short summary, fixed per type
  unsigned status = 0;  // HTTP status code
  std::string detail;   // explanation of this occurrence

  // The <name> part of `type`, or empty if the type is not one of ours.
  std::string_view name() const;
};

// Builds the problem for `e` with the given detail (status, type and title from describe()).
problem make_problem(errc e, std::string detail);

// Serialises to the compact JSON body sent with Content-Type application/problem+json.
std::string to_body(const problem& p);
// Parses a problem+json body; nullopt if it is not a JSON object with type and status.
std::optional<problem> parse_problem(std::string_view body);

void to_json(nlohmann::json& j, const problem& p);
void from_json(const nlohmann::json& j, problem& p);

}  // namespace exactly
