// Durable queues: the engine chosen by the database, and the ids minted in one place.
#include "queue_store.hpp"

#include <exactly/common/request_id.hpp>

namespace exactly::client {

queue_store::queue_store(database db)
    : db_(db),
      impl_(db.kind() == engine::sqlite ? make_sqlite_queue_engine(db.as_sqlite())
                                        : make_pg_queue_engine(db.as_postgres())) {}

bool queue_store::enqueue(std::string_view endpoint, const message& m, std::int64_t now_ms) {
  const bool appended = impl_->enqueue(
      endpoint, m.id.empty() ? request_id::mint_monotonic(now_ms).to_string() : m.id, m, now_ms);
  appended_ += appended ? 1 : 0;
  return appended;
}

void queue_store::enqueue_failed(std::string_view endpoint, const message& m,
                                 std::string_view error, std::int64_t retry_at_ms,
                                 std::int64_t now_ms) {
  if (!impl_->enqueue(endpoint, m.id, m, now_ms))
    return;  // queued already: that copy keeps its own attempts
  const auto seq = db_.query_int64(
      "SELECT seq FROM exactly_queue WHERE endpoint = ? AND message_id = ?", endpoint, m.id);
  if (seq)
    impl_->retry_later(*seq, retry_at_ms, error);
}

}  // namespace exactly::client
