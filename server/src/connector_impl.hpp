#pragma once
// Private: the connector's state, shared by the files that carry out its requests and its outbox.

#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include "id_state.hpp"
#include "interaction_store.hpp"
#include "protocol_clock.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace exactly::server {

struct connector::impl {
  struct route_entry {
    validate_fn validate;
    execute_fn execute;
  };

  // One connection: the protocol's rows through the contract only, and the same connection
  // for business logic and user routes.
  struct lane {
    std::unique_ptr<interaction_store> store;
    std::optional<database> db;
  };

  // Opens and migrates the store of the engine chosen (as many connections as asked), and its
  // reader when separate reads apply. std::invalid_argument for a bad connection count.
  explicit impl(connector_options o);
  void open_store();

  // The calling thread's connection (connector::use_connection_on_this_thread), else the first.
  lane& here();
  interaction_store& store() { return *here().store; }
  database& db() { return *here().db; }
  // Adds to the counters (any thread).
  template <class Fn>
  void count(Fn add) {
    std::lock_guard lock(stats_mutex);
    add(stats);
  }

  std::uint64_t number;  // this connector's, for the threads that chose a connection of it
  connector_options opts;
  protocol_clock clock;     // opts.clock, never earlier than a time used before (any thread)
  std::vector<lane> lanes;  // at least one; lanes[0] for unassigned threads
  std::unique_ptr<interaction_store> reader;  // GETs only, on the thread that calls read()
  std::atomic<std::int64_t> read_replays{0};
  std::map<std::string, route_entry, std::less<>> routes;
  std::map<std::string, std::function<void(message_context&)>, std::less<>> handlers;
  mutable std::mutex stats_mutex;  // guards stats: each connection's thread counts
  connector_stats stats;
  std::function<void()> on_durable_execution;   // see connector::on_durable_execution
  std::mt19937_64 rng{std::random_device{}()};  // outbox retry jitter

  // Records the messages that logic or a handler sends, in the transaction open now.
  send_fn outbox_sender(std::string source, std::int64_t now);
  // A GET from the reader: one SELECT is its own snapshot of committed rows.
  interaction_response read(const interaction_request& r, const request_id& id);
  // Carries out one request in one transaction of the store, by the id state machine's decision.
  interaction_response handle(const interaction_request& r, const request_id& id,
                              const route_entry& route);
  // Resolves the route and id of `r` (else a problem), then answers `carry_out(id, route)`; an
  // exception escaping it is storage trouble (503) or a defect (500 internal-error).
  template <class Fn>
  interaction_response answer(const interaction_request& r, Fn carry_out);
};

}  // namespace exactly::server
