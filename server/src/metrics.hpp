#pragma once
// Request counters and the latency histogram of one http_server, rendered as Prometheus text.
// Thread-safe: observe*() from the network thread, render() from any thread.

#include <exactly/common/error.hpp>
#include <exactly/server/connector_types.hpp>

#include "commit_group.hpp"

#include <array>
#include <atomic>
#include <string>

namespace exactly::server {

// What a scrape reads on the storage thread: the connector's counters and the row gauges.
struct storage_figures {
  connector_stats stats;
  state_counts rows;
  std::int64_t outbox_pending = 0;
  std::int64_t dead_letters = 0;
};

class metrics {
 public:
  static constexpr std::array<double, 12> bucket_bounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                        0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

  void observe_request(unsigned status, double seconds);
  void count_problem(errc e);
  void count_tls_handshake_failure() { tls_handshake_failures_++; }
  void count_connection_refused() { connections_refused_++; }
  void count_tls_handshake_refused() { tls_handshakes_refused_++; }
  // Prometheus text: `figures` (read on the storage thread) and the commit groups' `groups` (as
  // they are now), with this object's counters.
  std::string render(const storage_figures& figures, const group_stats& groups) const;

 private:
  std::array<std::atomic<std::int64_t>, 6> by_class_{};                        // index status/100
  std::array<std::atomic<std::int64_t>, 32> problems_{};                       // index errc value
  std::array<std::atomic<std::int64_t>, bucket_bounds.size() + 1> buckets_{};  // last = +Inf
  std::atomic<std::int64_t> count_{0};
  std::atomic<std::int64_t> sum_micros_{0};
  std::atomic<std::int64_t> tls_handshake_failures_{0};
  std::atomic<std::int64_t> connections_refused_{0};     // over server_options::max_connections
  std::atomic<std::int64_t> tls_handshakes_refused_{0};  // over max_tls_handshakes
};

}  // namespace exactly::server
