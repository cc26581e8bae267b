#pragma once
// The access log: one line per request answered, through spdlog or to a file of its own.

#include <exactly/server/http_server.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace spdlog {
class logger;
}

namespace exactly::server {

// What one line records.
struct access_entry {
  std::string_view remote;     // "address:port" of the peer
  std::string_view principal;  // "" when none (unauthenticated, open mode)
  std::string_view method;
  std::string_view target;
  unsigned status = 0;
  std::size_t bytes = 0;  // of the response body
  std::chrono::steady_clock::duration duration{};
  std::string_view outcome;  // Exactly-Once-Outcome: "executed", "replayed", "" when none
};

// The line of `e` answered at `at`, without a newline:
// 2026-11-25T19:30:00.123Z 127.0.0.1:53422 alice POST /vectors/echo/<id> 200 17 1.234ms executed
// An empty field is "-"; bytes outside printable ASCII, spaces and '%' in the target are
// %-encoded, so every line has the same nine space-separated fields.
std::string format_access_line(const access_entry& e, std::chrono::system_clock::time_point at);

class access_log {
 public:
  // Throws spdlog::spdlog_ex when the file cannot be opened.
  explicit access_log(const access_log_options& opts);
  ~access_log();
  // Writes the line of `e` (any thread).
  void write(const access_entry& e);

 private:
  std::shared_ptr<spdlog::logger> file_;  // null: spdlog's default logger
};

}  // namespace exactly::server
