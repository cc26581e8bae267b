#pragma once
// The PostgreSQL engine of interaction_store: several connector processes over one database.
// Decisions on one id are serialized across processes by a transaction advisory lock on the id
// and row locks; the sweeper and the outbox dispatcher skip rows another transaction holds.
// Not thread-safe: one thread uses it at a time.

#include <exactly/common/postgres.hpp>

#include "interaction_store.hpp"

#include <chrono>

namespace exactly::server {

class pg_store final : public interaction_store {
 public:
  // Connects and migrates the server schema. Throws pg::error on failure.
  explicit pg_store(pg::options opts);
  // The GETs' store (connector::read), opened after one above migrated: no migration, no shard
  // of the row counters, every transaction read-only, and a lookup that waits on a lock longer
  // than `lock_timeout` fails (a 503).
  pg_store(pg::options opts, std::chrono::milliseconds lock_timeout);
  // `opts` with the session setup that claims the connection's shard of the row counters
  // (exactly.shard, which exactly_count_add adds to).
  static pg::options with_counter_shard(pg::options opts);

  // The connection business logic writes through, inside the connector's transaction.
  pg::connection& connection() { return db_; }

  std::unique_ptr<store_transaction> begin(bool write) override;
  bool available() const override { return db_.connected(); }
  void lock_id(std::string_view route, std::string_view id) override;
  void after_commit(std::function<void()> hook) override;
  std::optional<interaction_record> find(std::string_view route, std::string_view id) override;
  std::optional<record_facts> find_facts(std::string_view route, std::string_view id) override;
  staged_load staged_of(std::string_view owner) override;
  put_lookup find_for_put(std::string_view route, std::string_view id,
                          std::string_view owner) override;
  void insert_staged(std::string_view route, std::string_view id, std::string_view owner,
                     std::int64_t id_ms, std::int64_t now_ms, std::string_view content_type,
                     std::string_view body, std::string_view sha256) override;
  void mark_executed(std::string_view route, std::string_view id, const stored_response& response,
                     std::int64_t now_ms) override;
  void put_tombstone(std::string_view route, std::string_view id, std::string_view owner,
                     std::int64_t id_ms, tombstone_reason reason, std::int64_t now_ms,
                     std::optional<id_state> was) override;
  sweep_result sweep(std::int64_t now_ms, const timing& t) override;
  state_counts counts() override;
  std::int64_t clock_floor() override;
  void raise_clock_floor(std::int64_t ms) override;

  void outbox_add(std::string_view type, std::string_view body, std::string_view source,
                  std::int64_t now_ms) override;
  std::vector<outbox_message> outbox_due(std::int64_t now_ms, int limit,
                                         std::int64_t max_seq) override;
  std::int64_t outbox_last_seq() override;
  bool outbox_claim(std::int64_t seq, std::int64_t now_ms) override;
  void outbox_remove(std::int64_t seq) override;
  void outbox_retry_later(std::int64_t seq, std::int64_t next_attempt_ms,
                          std::string_view error) override;
  void outbox_dead_letter(std::int64_t seq, std::string_view error, std::int64_t now_ms) override;
  std::int64_t outbox_pending() override;
  std::int64_t dead_letter_count() override;

 private:
  // The lookup of a row's facts by route and id, locking the row in a write transaction.
  const std::string& facts_query() const;

  pg::connection db_;
  bool write_ = false;  // the transaction begun last writes: lookups lock the row they find
};

}  // namespace exactly::server
