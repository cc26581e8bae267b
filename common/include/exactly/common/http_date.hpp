#pragma once
// HTTP-dates (RFC 9110 §5.6.7, IMF-fixdate form) to and from Unix milliseconds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exactly {

// The last instant an HTTP-date can name here: Fri, 31 Dec 9999 23:59:59 GMT.
inline constexpr std::int64_t max_http_date_ms = 253'402'300'799'000;

// The IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") of `unix_ms` rounded DOWN to the whole
// second, so a promise "until this time" made with it never outlasts the exact one. Years
// 1970..9999 only; throws std::out_of_range otherwise.
std::string format_http_date(std::int64_t unix_ms);

// The Unix time in milliseconds (a whole second) of an IMF-fixdate; nullopt for any other text,
// including the obsolete RFC 850 and asctime forms and impossible dates (31 Feb).
std::optional<std::int64_t> parse_http_date(std::string_view text);

}  // namespace exactly
