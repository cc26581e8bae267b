#pragma once
// A bench-server process of exactly-bench (EXACTLY_BENCH_SERVER), started fresh per scenario.

#include "bench_types.hpp"

#include <child_process.hpp>

#include <sys/types.h>

#include <filesystem>

namespace exactly::bench {

namespace fs = std::filesystem;

// A fresh bench-server in `dir`.
class server_process {
 public:
  server_process(const fs::path& dir, const settings& s, const std::vector<std::string>& extra = {})
      : proc_(args(dir, s, extra), "", true) {
    const std::string& line = proc_.first_line();
    port_ = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
  }
  ~server_process() { proc_.terminate(); }
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return proc_.pid(); }

 private:
  static std::vector<std::string> args(const fs::path& dir, const settings& s,
                                       const std::vector<std::string>& extra) {
    std::vector<std::string> a = {EXACTLY_BENCH_SERVER, "--db", (dir / "server.db").string()};
    if (!s.postgres.empty()) {
      a.insert(a.end(),
               {"--postgres", s.postgres, "--postgres-connections", std::to_string(s.connections)});
      if (s.unflushed_lane)
        a.push_back("--postgres-unflushed-lane");
    }
    if (s.relaxed)
      a.push_back("--synchronous-normal");
    if (s.no_background_sync)
      a.push_back("--no-background-sync");
    if (s.ungrouped)
      a.push_back("--no-group-commit");
    if (s.reads_together)
      a.push_back("--no-separate-reads");
    if (s.fsync_delay_us > 0)
      a.insert(a.end(), {"--fsync-delay-us", std::to_string(s.fsync_delay_us)});
    a.insert(a.end(), {"--wal-pages", std::to_string(s.wal_pages)});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  test::child_process proc_;
  std::uint16_t port_ = 0;
};

}  // namespace exactly::bench
