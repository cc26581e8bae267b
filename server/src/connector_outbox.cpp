// The server outbox: messages sent by logic, delivered to local handlers after their commit.
#include <exactly/common/backoff.hpp>

#include "connector_impl.hpp"

#include <spdlog/spdlog.h>

namespace exactly::server {
namespace {

// A failed outbox message waits 100 ms, doubling up to a minute, before it is tried again.
constexpr backoff_policy outbox_retry{std::chrono::milliseconds(100), std::chrono::minutes(1)};

}  // namespace

send_fn connector::impl::outbox_sender(std::string source, std::int64_t now) {
  return
      [this, source = std::move(source), now](std::string_view type, const nlohmann::json& body) {
        store().outbox_add(type, body.dump(), source, now);
      };
}

std::int64_t connector::outbox_last_seq() {
  auto tx = impl_->store().begin(false);
  return impl_->store().outbox_last_seq();
}

std::size_t connector::dispatch_outbox(int batch, std::int64_t max_seq) {
  auto& s = *impl_;
  const std::int64_t now = s.clock.now();
  std::vector<outbox_message> due;
  {
    auto tx = s.store().begin(false);
    due = s.store().outbox_due(now, batch, max_seq);
  }
  std::size_t handled = 0;
  for (const outbox_message& m : due) {
    auto tx = s.store().begin(true);
    if (!s.store().outbox_claim(m.seq, now))
      continue;  // another instance is delivering it, or has
    const auto handler = s.handlers.find(m.type);
    std::string error;
    if (handler == s.handlers.end()) {
      error = "no handler registered for message type " + m.type;
    } else {
      try {
        const auto body = nlohmann::json::parse(m.body);
        message_context ctx(s.db(), m.type, body,
                            s.outbox_sender("message " + std::to_string(m.seq), now));
        handler->second(ctx);
        s.store().outbox_remove(m.seq);
        tx->commit();
        s.count([](connector_stats& c) { ++c.messages_delivered; });
        ++handled;
        continue;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    // The handler's writes are rolled back; record the failure in a fresh transaction.
    tx.reset();
    tx = s.store().begin(true);
    s.count([](connector_stats& c) { ++c.messages_failed; });
    if (m.attempts + 1 >= s.opts.outbox_max_attempts || handler == s.handlers.end()) {
      s.store().outbox_dead_letter(m.seq, error, now);
      s.count([](connector_stats& c) { ++c.messages_dead_lettered; });
      spdlog::error("message {} ({}) dead-lettered: {}", m.seq, m.type, error);
    } else {
      s.store().outbox_retry_later(m.seq, now + outbox_retry.delay(m.attempts, s.rng).count(),
                                   error);
    }
    tx->commit();
  }
  return handled;
}

}  // namespace exactly::server
