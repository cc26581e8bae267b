#pragma once
// The operator page's gate and answer (operator_page.hpp in include/ has its options): its
// path, its own key (HTTP Basic password or Bearer), its filter, its HTML.

#include <exactly/common/database.hpp>
#include <exactly/server/http_server.hpp>
#include <exactly/server/operator_page.hpp>

#include "operator_view.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace exactly::server {

inline constexpr std::string_view operator_page_path = "/_exactly/operator";

class operator_page {
 public:
  // Throws std::invalid_argument, when enabled, for a key shorter than 16 characters, a key
  // equal to one of `api_keys` or to `test_control_key`, or max_rows 0.
  operator_page(operator_page_options o, const std::vector<api_key>& api_keys,
                const std::string& test_control_key);

  // Whether the page is on and `path` is its path or lies under it.
  bool handles(std::string_view path) const;
  // Whether the Authorization header value `authorization` carries the key: "Basic " and
  // base64 of "<any user>:<key>", or "Bearer <key>" (schemes case-insensitive, constant time).
  bool authorized(std::string_view authorization) const;
  // The answer to `method` on `path` with `query` (storage thread): the page, 405 for a method
  // other than GET, 404 under the page's path, 400 for a bad filter. `figures` are read now;
  // `db` the connector's storage; `now_ms` its clock.
  http_response answer(std::string_view method, std::string_view path, std::string_view query,
                       const database& db, const storage_figures& figures, std::int64_t now_ms,
                       std::chrono::seconds uptime) const;

 private:
  operator_page_options opts_;
};

// The filter of the query string `query`, or why it is refused.
std::variant<operator_filter, std::string> parse_operator_filter(std::string_view query);

// The listings of view.filter, at most view.max_rows rows each, through the inspection API
// (storage thread; both engines): staged oldest first, executed and tombstones newest first, the
// outbox and the dead letters oldest first. `figures` give the unfiltered totals.
void read_operator_listings(const database& db, const storage_figures& figures,
                            operator_view& view);

}  // namespace exactly::server
