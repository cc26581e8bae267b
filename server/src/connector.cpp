// The connector: routes and message handlers registered, its store opened, its counts.
#include <exactly/common/protocol.hpp>
#include <exactly/server/connector.hpp>

#include "connector_impl.hpp"
#include "pg_store.hpp"
#include "sqlite_store.hpp"

#include <atomic>
#include <stdexcept>

namespace exactly::server {

namespace {

// Each connector's number, never reused (an address may be, once a connector is gone).
std::atomic<std::uint64_t> connectors_made{0};
// The connector and connection the calling thread chose (connector::use_connection_on_this_thread).
thread_local std::uint64_t thread_owner = 0;
thread_local std::size_t thread_lane = 0;

}  // namespace

connector::impl::impl(connector_options o)
    : number(++connectors_made), opts(std::move(o)), clock(opts.clock) {
  if (opts.postgres_connections == 0 || (!opts.postgres && opts.postgres_connections != 1)) {
    throw std::invalid_argument(
        "connector: postgres_connections must be at least 1, and 1 on SQLite (one writer)");
  }
  if (opts.postgres_unflushed_lane && opts.postgres_connections < 2) {
    throw std::invalid_argument(
        "connector: postgres_unflushed_lane needs PostgreSQL and postgres_connections of 2 or "
        "more");
  }
  open_store();
  // A process starting with its clock set back decides no earlier than the store's time.
  auto tx = store().begin(false);
  clock.now_at_least(store().clock_floor());
}

connector::impl::lane& connector::impl::here() {
  return thread_owner == number ? lanes[thread_lane] : lanes.front();
}

void connector::impl::open_store() {
  if (opts.postgres) {
    for (std::size_t i = 0; i < opts.postgres_connections; ++i) {
      auto pg = std::make_unique<pg_store>(*opts.postgres);
      lane& l = lanes.emplace_back();
      l.db.emplace(pg->connection());
      l.store = std::move(pg);
    }
    // GETs on a connection of their own, off the chain of statements of the writing ones (the
    // server runs them on a thread of their own: a round trip would hold up the network thread).
    if (opts.separate_reads)
      reader = std::make_unique<pg_store>(*opts.postgres, opts.read_lock_timeout);
    return;
  }
  auto sqlite = std::make_unique<sqlite_store>(opts.db_path, opts.db);
  lane& l = lanes.emplace_back();
  l.db.emplace(sqlite->connection());
  l.store = std::move(sqlite);
  const bool in_memory = opts.db_path.empty() || opts.db_path == ":memory:" ||
                         opts.db_path.starts_with("file::memory:");
  if (opts.separate_reads && opts.db.wal && !in_memory) {
    // Reads run on the network thread: a lock held elsewhere (another process, recovery)
    // becomes a quick 503 instead of a stall of every connection.
    sqlite::options ro = opts.db;
    ro.busy_timeout = opts.read_lock_timeout;
    reader = std::make_unique<sqlite_store>(opts.db_path, ro, sqlite_store::access::read_only);
  }
}

connector::connector(connector_options opts) : impl_(std::make_unique<impl>(std::move(opts))) {}
connector::~connector() = default;

void connector::add_route(std::string route_template, validate_fn validate, execute_fn execute) {
  const std::string suffix = "/" + std::string(protocol::id_placeholder);
  if (route_template.size() <= suffix.size() || !route_template.starts_with("/") ||
      !route_template.ends_with(suffix) ||
      route_template.find('{') != route_template.size() - suffix.size() + 1) {
    throw std::invalid_argument("route template must look like /a/b/{id}: " + route_template);
  }
  if (!impl_->routes
           .emplace(route_template, impl::route_entry{std::move(validate), std::move(execute)})
           .second) {
    throw std::invalid_argument("route registered twice: " + route_template);
  }
}

void connector::on_message(std::string type, std::function<void(message_context&)> handler) {
  impl_->handlers[std::move(type)] = std::move(handler);
}

void connector::on_durable_execution(std::function<void()> fn) {
  impl_->on_durable_execution = std::move(fn);
}

std::vector<std::string> connector::routes() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : impl_->routes)
    out.push_back(name);
  return out;
}

sweep_result connector::sweep() {
  interaction_store& store = impl_->store();
  auto tx = store.begin(true);
  // The time the sweep purges by is persisted with its work: no process sharing the store, and
  // none started later, decides with an earlier time (a PUT of a purged id stays too old).
  const std::int64_t now = impl_->clock.now_at_least(store.clock_floor());
  const sweep_result r = store.sweep(now, impl_->opts.times);
  store.raise_clock_floor(now);
  tx->commit();
  // The sweeper may run inside an open commit group: its work counts once that commits.
  store.after_commit([this, r] {
    impl_->count([&r](connector_stats& s) {
      s.swept_staged += r.expired_staged;
      s.swept_responses += r.expired_responses;
      s.purged_tombstones += r.purged_tombstones;
      s.released_pages += r.released_pages;
    });
  });
  return r;
}

state_counts connector::counts() {
  auto tx = impl_->store().begin(false);
  return impl_->store().counts();
}
std::int64_t connector::outbox_pending() {
  auto tx = impl_->store().begin(false);
  return impl_->store().outbox_pending();
}
std::int64_t connector::dead_letters() {
  auto tx = impl_->store().begin(false);
  return impl_->store().dead_letter_count();
}
connector_stats connector::stats() const {
  connector_stats s;
  {
    std::lock_guard lock(impl_->stats_mutex);
    s = impl_->stats;
  }
  s.replays += impl_->read_replays.load();
  s.clock_step_backs = impl_->clock.step_backs();
  return s;
}
sqlite::connection& connector::db() {
  return impl_->db().as_sqlite();
}
pg::connection& connector::pg() {
  return impl_->db().as_postgres();
}
database connector::storage() {
  return impl_->db();
}
database connector::storage(std::size_t i) {
  return *impl_->lanes.at(i).db;
}
std::size_t connector::connections() const {
  return impl_->lanes.size();
}
bool connector::unflushed_lane() const {
  return impl_->opts.postgres_unflushed_lane;
}
void connector::use_connection_on_this_thread(std::size_t i) {
  if (i >= impl_->lanes.size())
    throw std::out_of_range("connector: no connection " + std::to_string(i));
  thread_owner = impl_->number;
  thread_lane = i;
}
bool connector::ready() const {
  // The first connection's: the background jobs use it at every interval, so it comes back by
  // itself; another one reconnects at its next request, which a balancer draining an instance
  // not ready would never send.
  return impl_->lanes.front().store->available();
}
const connector_options& connector::options() const {
  return impl_->opts;
}

}  // namespace exactly::server
