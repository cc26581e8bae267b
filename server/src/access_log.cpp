// The access log's line format and its two destinations.
#include "access_log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <ctime>

namespace exactly::server {
namespace {

// `s`, or "-" when empty; bytes that would split or garble a line %-encoded.
std::string field(std::string_view s) {
  if (s.empty())
    return "-";
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '%') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string format_access_line(const access_entry& e, std::chrono::system_clock::time_point at) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(at.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char time[80];  // room for any int the compiler sees
  std::snprintf(time, sizeof time, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms % 1000));
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3fms",
                duration_cast<microseconds>(e.duration).count() / 1000.0);
  return std::string(time) + ' ' + field(e.remote) + ' ' + field(e.principal) + ' ' +
         field(e.method) + ' ' + field(e.target) + ' ' + std::to_string(e.status) + ' ' +
         std::to_string(e.bytes) + ' ' + duration + ' ' + field(e.outcome);
}

access_log::access_log(const access_log_options& opts) {
  if (opts.file.empty())
    return;
  // Not registered: several servers in one process may each have a log of their own.
  file_ = std::make_shared<spdlog::logger>(
      "exactly.access", std::make_shared<spdlog::sinks::basic_file_sink_mt>(opts.file));
  file_->set_pattern("%v");
  file_->flush_on(spdlog::level::trace);
}

access_log::~access_log() = default;

void access_log::write(const access_entry& e) {
  const std::string line = format_access_line(e, std::chrono::system_clock::now());
  if (file_)
    file_->info(line);
  else
    spdlog::info("access {}", line);
}

}  // namespace exactly::server
