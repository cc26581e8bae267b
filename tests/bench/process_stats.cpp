#include "process_stats.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace exactly::bench {
namespace {

std::string proc(pid_t pid, const char* file) {
  return "/proc/" + std::to_string(pid) + "/" + file;
}

std::int64_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream in(proc(pid, "status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field + ":"))
      return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

}  // namespace

double cpu_seconds(pid_t pid) {
  std::ifstream in(proc(pid, "stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  // Fields after the command name (which may hold spaces) start after the last ')'.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14)
      utime = std::stol(field);
    if (i == 15)
      stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::int64_t rss_kib(pid_t pid) {
  return status_kib(pid, "VmRSS");
}

std::int64_t peak_rss_kib(pid_t pid) {
  return status_kib(pid, "VmHWM");
}

std::int64_t anon_kib(pid_t pid) {
  return status_kib(pid, "RssAnon");
}

void reset_peak_rss(pid_t pid) {
  std::ofstream(proc(pid, "clear_refs")) << "5";
}

}  // namespace exactly::bench
