#pragma once
// exactly-bench's view of the servers' storage threads: where their requests' time went in a
// scenario's measured time, read from /metrics (exactly_commit_group_*) around it.

#include "bench_types.hpp"

#include <http_client.hpp>
#include <metrics_text.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace exactly::bench {

// The sums /metrics shows for one kind of commit group (flushed or unflushed): the requests
// timed and the groups, and the seconds of each step and of the COMMITs.
struct group_sums {
  double requests = 0, groups = 0;
  double waiting = 0, running = 0, committed = 0, answered = 0, commit = 0;
};
// Both kinds, added up over the servers: [0] flushed, [1] unflushed.
using storage_sums = std::array<group_sums, 2>;

// The storage sums of the servers listening on `ports`, scraped now (a line missing counts 0).
inline storage_sums read_storage_sums(const std::vector<std::uint16_t>& ports) {
  storage_sums sums{};
  for (const std::uint16_t port : ports) {
    const std::string text = test::http_client(port).request("GET", "/metrics").body;
    const auto value = [&](const std::string& series) {
      return test::series_value(text, series, 0);
    };
    const double all_groups = value("exactly_commit_groups_total");
    const double unflushed_groups = value("exactly_commit_groups_unflushed_total");
    for (std::size_t k = 0; k < sums.size(); ++k) {
      const std::string group = std::string("{group=\"") + (k == 0 ? "flushed" : "unflushed") + '"';
      const auto seconds = [&](const char* step) {
        return value("exactly_commit_group_request_seconds_total" + group + ",step=\"" + step +
                     "\"}");
      };
      group_sums& s = sums[k];
      s.requests += value("exactly_commit_group_requests_timed_total" + group + "}");
      s.waiting += seconds("waiting");
      s.running += seconds("running");
      s.committed += seconds("committed");
      s.answered += seconds("answered");
      s.groups += k == 0 ? all_groups - unflushed_groups : unflushed_groups;
      s.commit += value("exactly_commit_group_commit_seconds_total" + group + "}");
    }
  }
  return sums;
}

// What the servers' requests did between `before` and `after`, per kind of group that had any:
// a request's mean ms waiting, running, until committed and until answered, a group's mean
// COMMIT, and the mean requests a group.
inline std::vector<step_figures> storage_steps(const storage_sums& before,
                                               const storage_sums& after) {
  std::vector<step_figures> out;
  for (std::size_t k = 0; k < before.size(); ++k) {
    const group_sums& a = after[k];
    const group_sums& b = before[k];
    const double requests = a.requests - b.requests, groups = a.groups - b.groups;
    if (requests <= 0 || groups <= 0)
      continue;
    const std::string kind = k == 0 ? "flushed" : "unflushed";
    const auto ms_each = [&](double s) { return 1000 * s / requests; };
    out.push_back({"server_mean_ms_per_" + kind + "_request",
                   "server's " + kind + " groups, ms",
                   "server_requests_per_" + kind + "_group",
                   {{"waiting", ms_each(a.waiting - b.waiting)},
                    {"running", ms_each(a.running - b.running)},
                    {"committed", ms_each(a.committed - b.committed)},
                    {"answered", ms_each(a.answered - b.answered)},
                    {"COMMIT", 1000 * (a.commit - b.commit) / groups}},
                   requests / groups,
                   "requests"});
  }
  return out;
}

}  // namespace exactly::bench
