// The connector: carries out the per-id decisions on the storage contract, runs logic once.
#include <exactly/common/backoff.hpp>
#include <exactly/common/crash_point.hpp>
#include <exactly/common/digest.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include "id_state.hpp"
#include "respond.hpp"
#include "sqlite_store.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace exactly::server {
namespace {

// A failed outbox message waits 100 ms, doubling up to a minute, before it is tried again.
constexpr backoff_policy outbox_retry{std::chrono::milliseconds(100), std::chrono::minutes(1)};

interaction_response stored(const stored_response& r, std::string_view outcome) {
  return {r.status, r.content_type, r.body, std::string(outcome), std::nullopt};
}

// An answer without a body (200, 201, 204).
interaction_response bodiless(unsigned status) {
  return {status, "", "", "", std::nullopt};
}

}  // namespace

struct connector::impl {
  struct route_entry {
    validate_fn validate;
    execute_fn execute;
  };

  explicit impl(connector_options o) : opts(std::move(o)) {
    auto sqlite = std::make_unique<sqlite_store>(opts.db_path, opts.db);
    db = &sqlite->connection();
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

  connector_options opts;
  std::unique_ptr<interaction_store> store;   // the protocol's rows, through the contract only
  sqlite::connection* db = nullptr;           // the store's, for business logic and user routes
  std::unique_ptr<interaction_store> reader;  // GETs only, on the thread that calls read()
  std::atomic<std::int64_t> read_replays{0};
  std::map<std::string, route_entry, std::less<>> routes;
  std::map<std::string, std::function<void(message_context&)>, std::less<>> handlers;
  connector_stats stats;
  std::mt19937_64 rng{std::random_device{}()};  // outbox retry jitter

  send_fn outbox_sender(std::string source, std::int64_t now) {
    return
        [this, source = std::move(source), now](std::string_view type, const nlohmann::json& body) {
          store->outbox_add(type, body.dump(), source, now);
        };
  }

  // A GET from the reader: one SELECT is its own snapshot of committed rows.
  interaction_response read(const interaction_request& r, const request_id& id) {
    const request_facts facts{r.v,          r.principal, id.timestamp_ms(),
                              opts.clock(), "",          r.content_type};
    const auto rec = reader->find(r.route, r.id);
    std::optional<record_facts> known;
    if (rec)
      known = *rec;
    const decision d = decide(known, facts, opts.times);
    if (d.next_action == action::replay) {
      ++read_replays;
      return stored(rec->response, protocol::outcome_replayed);
    }
    if (d.next_action != action::fail)
      throw std::logic_error("a GET decided to write");
    return problem_response(d.error);
  }

  interaction_response handle(const interaction_request& r, const request_id& id,
                              const route_entry& route) {
    const std::int64_t now = opts.clock();
    const std::string id_text(r.id);
    std::string digest;
    if (r.v == verb::put)
      digest = sha256(r.body);
    const request_facts facts{r.v, r.principal, id.timestamp_ms(), now, digest, r.content_type};

    auto tx = store->begin(r.v != verb::get);
    // Bodies are read only where they are used: to execute (POST) or replay (POST, GET).
    std::optional<interaction_record> rec;
    std::optional<record_facts> known;
    if (r.v == verb::post || r.v == verb::get) {
      rec = store->find(r.route, id_text);
      if (rec)
        known = *rec;
    } else {
      known = store->find_facts(r.route, id_text);
    }
    decision d = decide(known, facts, opts.times);

    if (d.next_action == action::stage) {
      const incoming_request in{r.content_type, r.body};
      const auto refusal = route.validate(in);
      d = decide_stage(!refusal, refusal ? 0 : store->count_staged(r.principal),
                       opts.max_staged_per_principal);
      if (d.next_action == action::fail && d.error == errc::invalid_payload) {
        return problem_response(errc::invalid_payload, *refusal);
      }
    }

    switch (d.next_action) {
      case action::fail:
        return problem_response(d.error);
      case action::confirm_staged:
        return bodiless(200);
      case action::replay:
        tx.reset();  // a read: over; the replay counts once its answer may go out
        store->after_commit([this] { ++stats.replays; });
        return stored(rec->response, protocol::outcome_replayed);
      case action::no_change:
        return bodiless(204);
      case action::stage:
        store->insert_staged(r.route, id_text, r.principal, id.timestamp_ms(), now, r.content_type,
                             r.body, digest);
        tx->commit();
        return bodiless(201);
      case action::tombstone:
      case action::tombstone_unknown:
        store->put_tombstone(r.route, id_text, r.principal, id.timestamp_ms(),
                             tombstone_reason::deleted, now);
        tx->commit();
        return bodiless(204);
      case action::execute:
        break;
    }

    // action::execute: the logic, the stored response and its messages commit together.
    stored_response response;
    try {
      basic_session base(*db, r.route, id, r.principal,
                         outbox_sender(std::string(r.route) + " " + id_text, now));
      response = route.execute(base, {rec->request_content_type, rec->request_body});
    } catch (...) {
      // `tx` (in a commit group: a savepoint) rolls back the logic's writes; the id stays staged.
      interaction_response failed =
          failure_response(std::current_exception(), errc::execution_failed,
                           "logic of " + std::string(r.route) + " " + id_text);
      if (failed.problem == errc::execution_failed)
        ++stats.logic_failures;
      return failed;
    }
    store->mark_executed(r.route, id_text, response, now);
    tx->commit();
    // Once durable (inside a commit group: once the group's COMMIT has returned), before the
    // answer goes out.
    store->after_commit([this] {
      crash_point("server.after_commit_before_reply");
      ++stats.executions;
    });
    return stored(response, protocol::outcome_executed);
  }

  // Resolves the route and id of `r` (else a problem), then answers `carry_out(id, route)`; an
  // exception escaping it is storage trouble (503) or a defect (500 internal-error).
  template <class Fn>
  interaction_response answer(const interaction_request& r, Fn carry_out) {
    const auto route = routes.find(r.route);
    if (route == routes.end())
      return problem_response(errc::not_found, "no such route");
    const auto id = request_id::parse(r.id);
    if (!id) {
      return problem_response(errc::invalid_request_id,
                              "the id must be a canonical lowercase UUID version 7");
    }
    try {
      return carry_out(*id, route->second);
    } catch (...) {
      return failure_response(std::current_exception(), errc::internal_error,
                              std::string(r.route) + " " + id->to_string());
    }
  }
};

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

std::vector<std::string> connector::routes() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : impl_->routes)
    out.push_back(name);
  return out;
}

interaction_response connector::handle(const interaction_request& r) {
  return impl_->answer(r, [&](const request_id& id, const impl::route_entry& route) {
    return impl_->handle(r, id, route);
  });
}

interaction_response connector::read(const interaction_request& r) {
  if (r.v != verb::get || !impl_->reader)
    throw std::logic_error("connector::read carries out GETs, and only when has_separate_reads()");
  return impl_->answer(
      r, [&](const request_id& id, const impl::route_entry&) { return impl_->read(r, id); });
}

bool connector::has_separate_reads() const {
  return impl_->reader != nullptr;
}

sweep_result connector::sweep() {
  auto tx = impl_->store->begin(true);
  const sweep_result r = impl_->store->sweep(impl_->opts.clock(), impl_->opts.times);
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

std::size_t connector::dispatch_outbox(int batch) {
  auto& s = *impl_;
  const std::int64_t now = s.opts.clock();
  std::vector<outbox_message> due;
  {
    auto tx = s.store->begin(false);
    due = s.store->outbox_due(now, batch);
  }
  std::size_t handled = 0;
  for (const outbox_message& m : due) {
    auto tx = s.store->begin(true);
    const auto handler = s.handlers.find(m.type);
    std::string error;
    if (handler == s.handlers.end()) {
      error = "no handler registered for message type " + m.type;
    } else {
      try {
        const auto body = nlohmann::json::parse(m.body);
        message_context ctx{*s.db, m.type, body,
                            s.outbox_sender("message " + std::to_string(m.seq), now)};
        handler->second(ctx);
        s.store->outbox_remove(m.seq);
        tx->commit();
        ++s.stats.messages_delivered;
        ++handled;
        continue;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    // The handler's writes are rolled back; record the failure in a fresh transaction.
    tx.reset();
    tx = s.store->begin(true);
    ++s.stats.messages_failed;
    if (m.attempts + 1 >= s.opts.outbox_max_attempts || handler == s.handlers.end()) {
      s.store->outbox_dead_letter(m.seq, error, now);
      ++s.stats.messages_dead_lettered;
      spdlog::error("message {} ({}) dead-lettered: {}", m.seq, m.type, error);
    } else {
      s.store->outbox_retry_later(m.seq, now + outbox_retry.delay(m.attempts, s.rng).count(),
                                  error);
    }
    tx->commit();
  }
  return handled;
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
  return s;
}
sqlite::connection& connector::db() {
  return *impl_->db;
}
const connector_options& connector::options() const {
  return impl_->opts;
}

}  // namespace exactly::server
