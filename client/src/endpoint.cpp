// An endpoint composed: its shared parts, the batch runner and the publisher, and its queries.
#include "attempt_puts.hpp"
#include "batch_runner.hpp"
#include "endpoint_core.hpp"
#include "publisher.hpp"

#include <exactly/common/backoff.hpp>

#include <stdexcept>

namespace exactly::client {

endpoint_core::endpoint_core(std::string name_, database db_, endpoint_options opts_)
    : name(std::move(name_)),
      db(db_),
      opts(std::move(opts_)),
      queues(db_),
      invocations(db_),
      journal(attempt_journal::of(db_, opts.attempt_journal)) {}

std::int64_t endpoint_core::backoff_until(int attempts, std::int64_t now) {
  return now + backoff_policy{opts.retry_base, opts.retry_cap}.delay(attempts, rng).count();
}

struct endpoint::impl : endpoint_core {
  using endpoint_core::endpoint_core;
};

namespace {

// `opts`, once checked: throws std::invalid_argument for a value out of range.
endpoint_options checked(endpoint_options opts) {
  if (opts.max_unanswered_puts == 0)
    throw std::invalid_argument("endpoint_options::max_unanswered_puts must be at least 1");
  return opts;
}

}  // namespace

endpoint::endpoint(std::string name, database db, endpoint_options opts)
    : impl_(std::make_unique<impl>(std::move(name), db, checked(std::move(opts)))) {}

endpoint::~endpoint() = default;

endpoint_core& core_of(endpoint& e) {
  return *e.impl_;
}
endpoint::endpoint(endpoint&&) noexcept = default;

void send_in_transaction(database db, std::string_view to, message m) {
  queue_store(db).enqueue(to, m, system_now_ms());
}

void endpoint::on(std::string type, handler h) {
  impl_->handlers[std::move(type)] = std::move(h);
}

void endpoint::send(std::string_view to, message m) {
  database_transaction tx(impl_->db);
  impl_->queues.enqueue(to, m, impl_->opts.clock());
  tx.commit();
}

std::size_t endpoint::process_due(int limit) {
  take_unawaited_answers(*impl_);  // the PUTs of earlier batches, with put_wait::never
  return run_due_messages(*impl_, limit);
}

std::size_t endpoint::publish_due(int limit) {
  return publish_due_steps(*impl_, limit);
}

void endpoint::run_until_idle() {
  while (process_due() + publish_due() > 0) {
  }
}

const std::string& endpoint::name() const {
  return impl_->name;
}

std::int64_t endpoint::queued() {
  return impl_->queues.queued(impl_->name);
}

std::int64_t endpoint::pending_invocations() {
  return impl_->invocations.pending();
}

std::optional<invocation_info> endpoint::invocation(std::string_view request_id) {
  return impl_->invocations.find(request_id);
}

std::vector<error_entry> endpoint::errors() {
  return impl_->queues.errors(impl_->name);
}

bool endpoint::requeue_error(std::int64_t seq) {
  database_transaction tx(impl_->db);
  const bool requeued = impl_->queues.requeue_error(seq, impl_->opts.clock());
  tx.commit();
  return requeued;
}

}  // namespace exactly::client
