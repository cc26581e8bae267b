#pragma once
// The parts of an endpoint that its handler contexts, batch runner and publisher share.

#include "attempt_journal.hpp"
#include "invocation_store.hpp"
#include "queue_store.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/client/http_transport.hpp>

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace exactly::client {

class client_metrics;
class publish_claims;

struct endpoint_core {
  endpoint_core(std::string name, database db, endpoint_options opts);

  // When a step that failed `attempts` times before is due again: handler and publisher retries.
  std::int64_t backoff_until(int attempts, std::int64_t now);

  std::string name;
  database db;
  endpoint_options opts;
  queue_store queues;
  invocation_store invocations;
  attempt_journal journal;
  std::map<std::string, handler, std::less<>> handlers;
  std::mt19937_64 rng{std::random_device{}()};
  // Where requests and handler attempts are counted; null outside a runtime.
  std::shared_ptr<client_metrics> metrics{};
  // The steps the runtime's other publishers are sending now; null outside a runtime.
  std::shared_ptr<publish_claims> claims{};
  // When the publisher last read the journal for orphaned attempts (recover_orphans).
  std::optional<std::int64_t> orphans_read_ms{};
  // put_wait::never: the answers of PUTs sent by committed batches, not taken yet
  // (attempt_puts::observe_unawaited).
  std::vector<std::future<http_result>> unawaited_puts{};
};

// The parts of `e`.
endpoint_core& core_of(endpoint& e);

}  // namespace exactly::client
