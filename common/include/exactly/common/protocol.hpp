#pragma once
// Names of the wire protocol (headers, outcome values, problem type prefix) in one place.

#include <string_view>

namespace exactly {

// The four verbs of an interaction {route}/{id}.
enum class verb { put, post, get, delete_ };

}  // namespace exactly

namespace exactly::protocol {

// Response header telling whether this request ran the business logic or replayed it.
inline constexpr std::string_view outcome_header = "Exactly-Once-Outcome";
inline constexpr std::string_view outcome_executed = "executed";
inline constexpr std::string_view outcome_replayed = "replayed";

// Response header with the HTTP-date until which what the answer stands for stays available: the
// stored response (POST, GET) or the staged request waiting for its POST (PUT 201/200).
inline constexpr std::string_view retention_header = "Exactly-Once-Retention";

// Problem details (RFC 9457): media type and the prefix of every `type` member.
inline constexpr std::string_view problem_content_type = "application/problem+json";
inline constexpr std::string_view problem_type_prefix = "urn:exactly-once:problem:";

// The placeholder a route template must end with.
inline constexpr std::string_view id_placeholder = "{id}";

}  // namespace exactly::protocol
