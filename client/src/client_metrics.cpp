// The client's metrics on prometheus-cpp: a registry for what this process counts, a collectable
// that reads the database's gauges through the inspection API when scraped, the text serializer,
// and prometheus-cpp-pull's Exposer to serve them.
#include "client_metrics.hpp"

#include "http_answers.hpp"
#include "read_transaction.hpp"

#include <exactly/client/inspect.hpp>
#include <exactly/common/clock.hpp>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <spdlog/spdlog.h>

#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

namespace exactly::client {
namespace {

namespace prom = prometheus;

// Seconds, from a loopback round trip to a slow remote service.
const prom::Histogram::BucketBoundaries latency_buckets{
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

// The answer label: the lifecycle's class of the answer.
std::string answer_label(const http_result& r) {
  switch (classify(r)) {
    case answer_class::no_answer:
      return "no_answer";
    case answer_class::stored_response:
      return "stored_response";
    case answer_class::created:
      return "created";
    case answer_class::ok:
      return "ok";
    case answer_class::no_content:
      return "no_content";
    case answer_class::credentials_refused:
      return "credentials_refused";
    case answer_class::not_found:
      return "not_found";
    case answer_class::conflict:
      return "conflict";
    case answer_class::gone:
      return "gone";
    case answer_class::too_old:
      return "too_old";
    case answer_class::too_large:
      return "too_large";
    case answer_class::unprocessable:
      return "unprocessable";
    case answer_class::busy:
      return "busy";
    case answer_class::server_error:
      return "server_error";
    case answer_class::other:
      return "other";
  }
  return "other";
}

prom::MetricFamily gauge_family(std::string name, std::string help) {
  return {std::move(name), std::move(help), prom::MetricType::Gauge, {}};
}

void add_gauge(prom::MetricFamily& f, std::vector<prom::ClientMetric::Label> labels,
               std::int64_t value) {
  prom::ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = static_cast<double>(value);
  f.metric.push_back(std::move(m));
}

// The database's gauges, read when collected on a connection of their own (opened on first use,
// and again after a failure).
class database_gauges final : public prom::Collectable {
 public:
  database_gauges(client_metrics::connect_fn connect, prom::Counter& failures)
      : connect_(std::move(connect)), failures_(failures) {}

  void add_endpoint(std::string_view name) {
    std::lock_guard lock(mutex_);
    endpoints_.emplace(name);
  }

  std::vector<prom::MetricFamily> Collect() const override {
    std::lock_guard lock(mutex_);
    try {
      return read();
    } catch (const std::exception& e) {
      failures_.Increment();
      db_.reset();
      keep_.reset();
      spdlog::warn("client metrics: reading the database gauges failed: {}", e.what());
      return {};
    }
  }

 private:
  std::vector<prom::MetricFamily> read() const {
    if (!db_)
      db_ = connect_(keep_);
    std::vector<inspect::queue_depth> depths;
    std::vector<inspect::invocation_count> counts;
    {
      read_transaction snapshot(*db_);
      depths = inspect::queue_depths(*db_, system_now_ms());
      counts = inspect::invocation_counts(*db_);
    }
    std::set<std::string, std::less<>> shown;
    auto queue = gauge_family("exactly_client_queue_messages",
                              "Messages in an endpoint's input queue, due now or delayed");
    auto errors = gauge_family("exactly_client_error_queue_messages",
                               "Messages in an endpoint's error queue");
    for (const auto& d : depths) {
      shown.insert(d.endpoint);
      add_gauge(queue, {{"endpoint", d.endpoint}, {"status", "due"}}, d.due);
      add_gauge(queue, {{"endpoint", d.endpoint}, {"status", "delayed"}}, d.delayed);
      add_gauge(errors, {{"endpoint", d.endpoint}}, d.errors);
    }
    for (const std::string& e : endpoints_) {
      if (shown.contains(e))
        continue;
      add_gauge(queue, {{"endpoint", e}, {"status", "due"}}, 0);
      add_gauge(queue, {{"endpoint", e}, {"status", "delayed"}}, 0);
      add_gauge(errors, {{"endpoint", e}}, 0);
    }
    auto invocations = gauge_family("exactly_client_invocations",
                                    "Unfinished invoke_http calls by lifecycle state");
    for (const auto& c : counts)
      add_gauge(invocations, {{"state", c.state}}, c.count);
    return {std::move(queue), std::move(errors), std::move(invocations)};
  }

  client_metrics::connect_fn connect_;
  prom::Counter& failures_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<void> keep_;
  mutable std::optional<database> db_;
  std::set<std::string, std::less<>> endpoints_;
};

}  // namespace

struct client_metrics::impl {
  explicit impl(connect_fn connect)
      : registry(std::make_shared<prom::Registry>()),
        latency(prom::BuildHistogram()
                    .Name("exactly_client_request_duration_seconds")
                    .Help("Requests the client sent, by verb and answer, and how long each took")
                    .Register(*registry)),
        attempts(prom::BuildCounter()
                     .Name("exactly_client_handler_attempts_total")
                     .Help("Handler attempts whose outcome committed, by endpoint and outcome")
                     .Register(*registry)),
        failures(prom::BuildCounter()
                     .Name("exactly_client_metrics_database_errors_total")
                     .Help("Scrapes whose database gauges could not be read")
                     .Register(*registry)
                     .Add({})),
        gauges(std::make_shared<database_gauges>(std::move(connect), failures)) {}

  std::shared_ptr<prom::Registry> registry;
  prom::Family<prom::Histogram>& latency;
  prom::Family<prom::Counter>& attempts;
  prom::Counter& failures;
  std::shared_ptr<database_gauges> gauges;
  std::unique_ptr<prom::Exposer> exposer;
};

client_metrics::client_metrics(connect_fn connect)
    : impl_(std::make_shared<impl>(std::move(connect))) {}

client_metrics::~client_metrics() {
  impl_->exposer.reset();  // no scrape runs past here
}

void client_metrics::request(std::string_view verb, const http_result& answer) {
  impl_->latency
      .Add({{"verb", std::string(verb)}, {"answer", answer_label(answer)}}, latency_buckets)
      .Observe(std::chrono::duration<double>(answer.elapsed).count());
}

void client_metrics::handler_attempt(std::string_view endpoint, std::string_view outcome) {
  impl_->attempts.Add({{"endpoint", std::string(endpoint)}, {"outcome", std::string(outcome)}})
      .Increment();
}

void client_metrics::add_endpoint(std::string_view name) {
  impl_->gauges->add_endpoint(name);
}

std::string client_metrics::text() {
  std::vector<prom::MetricFamily> families = impl_->registry->Collect();
  for (auto& f : impl_->gauges->Collect())
    families.push_back(std::move(f));
  return prom::TextSerializer().Serialize(families);
}

int client_metrics::serve(const std::string& address) {
  try {
    impl_->exposer = std::make_unique<prom::Exposer>(address, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error("client metrics: cannot listen on " + address + ": " + e.what());
  }
  impl_->exposer->RegisterCollectable(impl_->registry);
  impl_->exposer->RegisterCollectable(impl_->gauges);
  const std::vector<int> ports = impl_->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace exactly::client
