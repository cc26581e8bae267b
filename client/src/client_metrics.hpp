#pragma once
// The client runtime's Prometheus metrics (docs/metrics.md): what happened in this process
// (requests by verb and answer with their latency, handler attempts by outcome), counted as it
// happens, and what the database holds (queue depths, error queues, invocations by state), read
// through the inspection API when scraped. Thread-safe.

#include <exactly/client/http_transport.hpp>
#include <exactly/common/database.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace exactly::client {

class client_metrics {
 public:
  // Opens a connection to the database the gauges read, kept alive by `keep`.
  using connect_fn = std::function<database(std::shared_ptr<void>& keep)>;

  explicit client_metrics(connect_fn connect);
  ~client_metrics();
  client_metrics(const client_metrics&) = delete;
  client_metrics& operator=(const client_metrics&) = delete;

  // One request sent (PUT, POST, GET or DELETE) and its answer, which took answer.elapsed.
  void request(std::string_view verb, const http_result& answer);
  // One handler attempt of `endpoint` that committed with its outcome: "committed", "failed"
  // (tried again later) or "error_queued".
  void handler_attempt(std::string_view endpoint, std::string_view outcome);
  // An endpoint whose queue gauges are shown even when its queues are empty.
  void add_endpoint(std::string_view name);

  // Every metric now in the Prometheus text exposition format (version 0.0.4). Reads the gauges
  // from the database: a few counting queries.
  std::string text();
  // Serves text() at http://<address>/metrics (e.g. "127.0.0.1:9464"; port 0 picks a free one)
  // until destroyed. Returns the port. Throws std::runtime_error when it cannot listen.
  int serve(const std::string& address);

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

// Records a request of `verb` on `metrics` when there are metrics (an endpoint in a runtime).
inline void note_request(client_metrics* metrics, std::string_view verb, const http_result& r) {
  if (metrics)
    metrics->request(verb, r);
}

}  // namespace exactly::client
