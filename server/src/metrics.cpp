// Request counters and the latency histogram, rendered as Prometheus text (see metrics.hpp).
#include "metrics.hpp"

#include <cstdio>
#include <sstream>
#include <utility>

namespace exactly::server {
namespace {

// Microseconds as seconds, every digit kept (a counter of a long-lived server grows large).
std::string as_seconds(std::int64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", static_cast<double>(us) / 1e6);
  return text;
}

}  // namespace

void metrics::observe_request(unsigned status, double seconds) {
  by_class_[std::min<unsigned>(status / 100, by_class_.size() - 1)]++;
  std::size_t i = 0;
  while (i < bucket_bounds.size() && seconds > bucket_bounds[i])
    ++i;
  buckets_[i]++;
  count_++;
  sum_micros_ += static_cast<std::int64_t>(seconds * 1e6);
}

void metrics::count_problem(errc e) {
  const auto i = static_cast<std::size_t>(e);
  if (i < problems_.size())
    problems_[i]++;
}

std::string metrics::render(const storage_figures& f, const group_stats& groups) const {
  const connector_stats& s = f.stats;
  const state_counts& rows = f.rows;
  std::ostringstream o;
  auto counter = [&o](const char* name, const char* help, std::int64_t v) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n"
      << name << ' ' << v << '\n';
  };
  auto gauge_header = [&o](const char* name, const char* help) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n";
  };
  counter("exactly_executions_total", "POSTs that ran the business logic, counted once committed.",
          s.executions);
  counter("exactly_replays_total",
          "Stored responses sent again (POST or GET), counted once answerable.", s.replays);
  counter("exactly_logic_failures_total", "Business logic runs that threw; nothing committed.",
          s.logic_failures);
  counter("exactly_messages_delivered_total", "Outbox messages handled by local handlers.",
          s.messages_delivered);
  counter("exactly_messages_dead_lettered_total", "Outbox messages moved to dead letters.",
          s.messages_dead_lettered);

  counter("exactly_commit_groups_total",
          "COMMITs of request groups (one fsync each, unless unflushed).", groups.groups);
  counter("exactly_commit_groups_unflushed_total",
          "Of those, groups of PUTs and DELETEs only, committed without waiting for the disk "
          "(none with flush_every_commit).",
          groups.unflushed);
  counter("exactly_commit_group_requests_total", "Requests answered from committed groups.",
          groups.requests);
  counter("exactly_commit_group_failures_total", "Groups whose COMMIT failed; none answered.",
          groups.failures);
  // Each family's lines together, by kind of group.
  const std::pair<const char*, const group_times*> kinds[] = {
      {"flushed", &groups.flushed_times}, {"unflushed", &groups.unflushed_times}};
  o << "# HELP exactly_commit_group_request_seconds_total Time the requests of committed groups"
       " spent from being handed to the storage thread, summed, by group (flushed, unflushed) and"
       " step: waiting (until begun), running (its own statements), committed (until its group"
       " was committed, and on disk if flushed), answered (until its answer left the storage"
       " thread).\n"
       "# TYPE exactly_commit_group_request_seconds_total counter\n";
  for (const auto& [kind, t] : kinds) {
    for (const auto& [step, us] :
         {std::pair{"waiting", t->waiting_us}, std::pair{"running", t->running_us},
          std::pair{"committed", t->committed_us}, std::pair{"answered", t->answered_us}}) {
      o << "exactly_commit_group_request_seconds_total{group=\"" << kind << "\",step=\"" << step
        << "\"} " << as_seconds(us) << '\n';
    }
  }
  o << "# HELP exactly_commit_group_requests_timed_total The requests those times add up.\n"
       "# TYPE exactly_commit_group_requests_timed_total counter\n";
  for (const auto& [kind, t] : kinds)
    o << "exactly_commit_group_requests_timed_total{group=\"" << kind << "\"} " << t->requests
      << '\n';
  o << "# HELP exactly_commit_group_commit_seconds_total Time in the groups' COMMITs, by group.\n"
       "# TYPE exactly_commit_group_commit_seconds_total counter\n";
  for (const auto& [kind, t] : kinds)
    o << "exactly_commit_group_commit_seconds_total{group=\"" << kind << "\"} "
      << as_seconds(t->commit_us) << '\n';
  counter("exactly_clock_step_backs_total",
          "Times the system clock fell behind the highest time the protocol has used (it then "
          "decides with that time until the clock catches up).",
          s.clock_step_backs);
  counter("exactly_sweeper_released_pages_total",
          "Free database pages the sweeper gave back to the file system.", s.released_pages);
  o << "# HELP exactly_sweeper_deletions_total Rows changed by the sweeper, by kind.\n"
       "# TYPE exactly_sweeper_deletions_total counter\n"
    << "exactly_sweeper_deletions_total{kind=\"staged_expired\"} " << s.swept_staged << '\n'
    << "exactly_sweeper_deletions_total{kind=\"response_expired\"} " << s.swept_responses << '\n'
    << "exactly_sweeper_deletions_total{kind=\"tombstone_purged\"} " << s.purged_tombstones << '\n';

  o << "# HELP exactly_problems_total Protocol problems answered, by type.\n"
       "# TYPE exactly_problems_total counter\n";
  for (errc e : all_errc) {
    o << "exactly_problems_total{type=\"" << describe(e).name << "\"} "
      << problems_[static_cast<std::size_t>(e)].load() << '\n';
  }

  gauge_header("exactly_interactions", "Interactions stored, by state.");
  o << "exactly_interactions{state=\"staged\"} " << rows.staged << '\n'
    << "exactly_interactions{state=\"executed\"} " << rows.executed << '\n'
    << "exactly_interactions{state=\"tombstone\"} " << rows.tombstone << '\n';
  gauge_header("exactly_outbox_pending", "Server outbox messages not yet handled.");
  o << "exactly_outbox_pending " << f.outbox_pending << '\n';
  gauge_header("exactly_dead_letters", "Messages in the dead-letter table.");
  o << "exactly_dead_letters " << f.dead_letters << '\n';

  o << "# HELP exactly_http_responses_total HTTP responses, by status class.\n"
       "# TYPE exactly_http_responses_total counter\n";
  for (std::size_t c = 1; c < by_class_.size(); ++c) {
    o << "exactly_http_responses_total{class=\"" << c << "xx\"} " << by_class_[c].load() << '\n';
  }

  counter("exactly_tls_handshake_failures_total",
          "TLS connections closed before a request: bad or missing client certificate, "
          "plain http, timeout.",
          tls_handshake_failures_.load());
  counter("exactly_connections_refused_total",
          "Connections closed unread at once: max_connections were open.",
          connections_refused_.load());
  counter("exactly_tls_handshakes_refused_total",
          "TLS connections closed unread at once: max_tls_handshakes were in progress.",
          tls_handshakes_refused_.load());

  o << "# HELP exactly_request_duration_seconds Time from a request read to its reply written.\n"
       "# TYPE exactly_request_duration_seconds histogram\n";
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i < bucket_bounds.size(); ++i) {
    cumulative += buckets_[i].load();
    o << "exactly_request_duration_seconds_bucket{le=\"" << bucket_bounds[i] << "\"} " << cumulative
      << '\n';
  }
  cumulative += buckets_.back().load();
  o << "exactly_request_duration_seconds_bucket{le=\"+Inf\"} " << cumulative << '\n'
    << "exactly_request_duration_seconds_sum " << static_cast<double>(sum_micros_.load()) / 1e6
    << '\n'
    << "exactly_request_duration_seconds_count " << count_.load() << '\n';
  return o.str();
}

}  // namespace exactly::server
