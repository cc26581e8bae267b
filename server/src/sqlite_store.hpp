#pragma once
// The SQLite engine of interaction_store. Not thread-safe: one thread uses it at a time.

#include <exactly/common/sqlite.hpp>

#include "interaction_store.hpp"

namespace exactly::server {

class sqlite_store final : public interaction_store {
 public:
  enum class access { read_write, read_only };
  // Opens `path` and migrates the server schema; read_only opens a database another store has
  // migrated and refuses writes (PRAGMA query_only). Throws sqlite::error on failure.
  sqlite_store(const std::string& path, sqlite::options opts, access a = access::read_write);

  // The connection business logic writes through, inside the connector's transaction.
  sqlite::connection& connection() { return db_; }

  std::unique_ptr<store_transaction> begin(bool write) override;
  bool available() const override { return true; }
  void lock_id(std::string_view, std::string_view) override {}
  void after_commit(std::function<void()> hook) override;
  std::optional<interaction_record> find(std::string_view route, std::string_view id) override;
  std::optional<record_facts> find_facts(std::string_view route, std::string_view id) override;
  staged_load staged_of(std::string_view owner) override;
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
  sqlite::connection db_;
};

}  // namespace exactly::server
