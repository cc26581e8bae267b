#pragma once
// How the runtime reads a server's answer: its class for the invocation lifecycle, its text for
// an error, and a stored response kept in a follow-up message's headers.

#include "invocation_lifecycle.hpp"

#include <exactly/client/http_transport.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exactly::client {

// The header in which an error-queued follow-up keeps the stored response it was given.
inline constexpr const char* kept_response_header = "exactly-response";

answer_class classify(const http_result& r);
lifecycle_event answer_event(const http_result& r);

// "<method> answered <status> <problem>: <detail>", or "<method> failed: <why>".
std::string describe_answer(std::string_view method, const http_result& r);

// The Unix ms an answer's Exactly-Once-Retention names (until when what it stands for stays
// available); nullopt when absent or not an IMF-fixdate.
std::optional<std::int64_t> available_until(const http_result& r);

// `headers` with `response` kept in them.
nlohmann::json keep_response(nlohmann::json headers, const http_result& response);
// The response kept in `headers`, if any.
std::optional<http_result> kept_response(const nlohmann::json& headers);

}  // namespace exactly::client
