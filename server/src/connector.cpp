// The connector: routes and message handlers registered, its store opened, its counts.
#include <exactly/common/protocol.hpp>
#include <exactly/server/connector.hpp>

#include "connector_impl.hpp"
#include "pg_store.hpp"
#include "sqlite_store.hpp"

#include <stdexcept>

namespace exactly::server {

connector::impl::impl(connector_options o) : opts(std::move(o)), clock(opts.clock) {
  open_store();
  // A process starting with its clock set back decides no earlier than the store's time.
  auto tx = store->begin(false);
  clock.now_at_least(store->clock_floor());
}

void connector::impl::open_store() {
  if (opts.postgres) {
    // Reads go through the storage thread too: a second connection would serve GETs on the
    // network thread, where a round trip to PostgreSQL would hold up every connection.
    auto pg = std::make_unique<pg_store>(*opts.postgres);
    db.emplace(pg->connection());
    store = std::move(pg);
    return;
  }
  auto sqlite = std::make_unique<sqlite_store>(opts.db_path, opts.db);
  db.emplace(sqlite->connection());
  store = std::move(sqlite);
  const bool in_memory = opts.db_path.empty() || opts.db_path == ":memory:" ||
                         opts.db_path.starts_with("file::memory:");
  if (opts.separate_reads && opts.db.wal && !in_memory) {
    // Reads run on the network thread: a lock held elsewhere (another process, recovery)
    // becomes a quick 503 instead of a stall of every connection.
    sqlite::options ro = opts.db;
    ro.busy_timeout = std::chrono::milliseconds(50);
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
  auto tx = impl_->store->begin(true);
  // The time the sweep purges by is persisted with its work: no process sharing the store, and
  // none started later, decides with an earlier time (a PUT of a purged id stays too old).
  const std::int64_t now = impl_->clock.now_at_least(impl_->store->clock_floor());
  const sweep_result r = impl_->store->sweep(now, impl_->opts.times);
  impl_->store->raise_clock_floor(now);
  tx->commit();
  // The sweeper may run inside an open commit group: its work counts once that commits.
  impl_->store->after_commit([this, r] {
    impl_->stats.swept_staged += r.expired_staged;
    impl_->stats.swept_responses += r.expired_responses;
    impl_->stats.purged_tombstones += r.purged_tombstones;
    impl_->stats.released_pages += r.released_pages;
  });
  return r;
}

state_counts connector::counts() {
  auto tx = impl_->store->begin(false);
  return impl_->store->counts();
}
std::int64_t connector::outbox_pending() {
  auto tx = impl_->store->begin(false);
  return impl_->store->outbox_pending();
}
std::int64_t connector::dead_letters() {
  auto tx = impl_->store->begin(false);
  return impl_->store->dead_letter_count();
}
connector_stats connector::stats() const {
  connector_stats s = impl_->stats;
  s.replays += impl_->read_replays.load();
  s.clock_step_backs = impl_->clock.step_backs();
  return s;
}
sqlite::connection& connector::db() {
  return impl_->db->as_sqlite();
}
pg::connection& connector::pg() {
  return impl_->db->as_postgres();
}
database connector::storage() {
  return *impl_->db;
}
bool connector::ready() const {
  return impl_->store->available();
}
const connector_options& connector::options() const {
  return impl_->opts;
}

}  // namespace exactly::server
