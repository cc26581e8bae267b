// Durable queues: the engine chosen by the database, and the ids minted in one place.
#include "queue_store.hpp"

#include <exactly/common/request_id.hpp>

namespace exactly::client {

queue_store::queue_store(database db)
    : impl_(db.kind() == engine::sqlite ? make_sqlite_queue_engine(db.as_sqlite())
                                        : make_pg_queue_engine(db.as_postgres())) {}

bool queue_store::enqueue(std::string_view endpoint, const message& m, std::int64_t now_ms) {
  return impl_->enqueue(
      endpoint, m.id.empty() ? request_id::mint_monotonic(now_ms).to_string() : m.id, m, now_ms);
}

}  // namespace exactly::client
