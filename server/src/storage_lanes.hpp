#pragma once
// The storage threads of a server, one per connection of its connector: every request of one id
// goes to the same thread (its route and id hashed), so its commits keep their order; the
// sweeper, the outbox dispatcher, /metrics and the interfaces that read go to the first. With
// connector::unflushed_lane(), the last thread takes the requests that may commit unflushed
// instead, and the others the rest: the requests of one id then keep their order through the
// database's locks, as between instances.

#include <exactly/server/connector.hpp>

#include "storage_executor.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace exactly::server {

class storage_lanes {
 public:
  // One storage thread per connection of `c`; the other arguments: see storage_executor.
  storage_lanes(connector& c, bool group_commit, bool flush_every_commit, bool background_sync);

  // The thread of everything that is not a request of one id.
  storage_executor& first() { return *lanes_.front(); }
  // The thread of the requests of `id` on `route`; `unflushed`: this one may commit unflushed.
  storage_executor& for_id(std::string_view route, std::string_view id, bool unflushed);
  // The threads of requests that need a flush in turn, for user routes (network thread).
  storage_executor& next();
  // The thread of the GETs, when each takes a round trip to the database
  // (connector::reads_take_a_round_trip); nullptr else (they are read on the network thread).
  storage_executor* reads() { return reads_.get(); }
  // The commit group counts of every thread, summed (any thread).
  group_stats group_counts() const;

  // Starts every thread on its own connection of the connector.
  void start();
  // Stops the other threads once their work is done, then the first after running `last` on it.
  void stop(std::function<void()> last);

 private:
  connector& connector_;
  std::vector<std::unique_ptr<storage_executor>> lanes_;
  std::size_t flushed_lanes_;  // the first ones; the last takes the unflushed if fewer than all
  std::size_t next_ = 0;
  std::unique_ptr<storage_executor> reads_;
};

}  // namespace exactly::server
