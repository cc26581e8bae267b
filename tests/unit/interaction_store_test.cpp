// The storage contract run against the SQLite engine, and what only SQLite does (pages).
#include "server/src/sqlite_store.hpp"
#include "tests/support/interaction_store_contract.hpp"

namespace exactly::server {
namespace {

INSTANTIATE_TEST_SUITE_P(engines, interaction_store_contract,
                         ::testing::Values(factory([](const std::string& dir) {
                           return std::make_unique<sqlite_store>(dir + "/store.db",
                                                                 sqlite::options{});
                         })),
                         [](const auto&) { return std::string("sqlite"); });

TEST(sqlite_store_file, the_sweeper_gives_the_pages_of_dropped_bodies_back) {
  scratch_dir dir;
  const std::string path = dir.db();
  {
    sqlite_store store(path, sqlite::options{});
    sqlite::connection& db = store.connection();
    EXPECT_EQ(db.query_int64("PRAGMA auto_vacuum"), 2);  // incremental, on a new database
    const timing t{};
    const std::string body(10000, 'x');  // on overflow pages
    {
      sqlite::transaction tx(db);
      for (int i = 0; i < 500; ++i) {
        const std::string id = "id-" + std::to_string(i);
        store.insert_staged("/r/{id}", id, "alice", t0, t0, "text/plain", body, "h");
      }
      tx.commit();
    }
    const std::int64_t pages_before = *db.query_int64("PRAGMA page_count");
    sqlite::transaction tx(db);
    const sweep_result r = store.sweep(t0 + t.staged_ttl_ms, t);  // drops the 5 MB of bodies
    tx.commit();
    EXPECT_EQ(r.expired_staged, 500);
    EXPECT_GT(r.released_pages, 0);
    const std::int64_t pages_after = *db.query_int64("PRAGMA page_count");
    EXPECT_LT(pages_after, pages_before / 2);
    // What stays free is the slack: an eighth of the pages in use, or 64 pages.
    const std::int64_t free_after = *db.query_int64("PRAGMA freelist_count");
    EXPECT_LE(free_after, std::max<std::int64_t>(64, (pages_after - free_after) / 8));
    sqlite::transaction again(db);
    EXPECT_EQ(store.sweep(t0 + t.staged_ttl_ms, t).released_pages, 0);
    again.commit();
  }
}

TEST(sqlite_store_file, an_upgraded_database_counts_the_rows_staged_before) {
  scratch_dir dir;
  const std::string path = dir.db();
  {
    sqlite_store store(path, sqlite::options{});
    sqlite::connection& db = store.connection();
    for (const char* id : {"a", "b", "c"})
      store.insert_staged("/r/{id}", id, "alice", t0, t0, "", std::string(10, *id), "");
    // Back to the schema of version 1, which had no counts.
    db.exec(
        "DROP TRIGGER exactly_staged_insert; DROP TRIGGER exactly_staged_leave;"
        "DROP TRIGGER exactly_staged_delete; DROP TABLE exactly_staged_counts;"
        "DROP TRIGGER exactly_count_insert; DROP TRIGGER exactly_count_move;"
        "DROP TRIGGER exactly_count_delete; DROP TRIGGER exactly_count_outbox_insert;"
        "DROP TRIGGER exactly_count_outbox_delete; DROP TRIGGER exactly_count_dead_insert;"
        "DROP TRIGGER exactly_count_dead_delete; DROP TABLE exactly_row_counts;"
        "DROP TABLE exactly_clock;"
        "UPDATE exactly_schema_version SET version = 1 WHERE component = 'exactly.server'");
  }
  {
    sqlite_store store(path, sqlite::options{});
    EXPECT_EQ(store.count_staged("alice"), 3);
    EXPECT_EQ(store.counts().staged, 3);
    EXPECT_EQ(store.staged_bytes("alice"), 30);
    store.mark_executed("/r/{id}", "a", {}, t0);
    EXPECT_EQ(store.count_staged("alice"), 2);
    EXPECT_EQ(store.staged_bytes("alice"), 20);
    EXPECT_EQ(store.counts().staged, 2);
    EXPECT_EQ(store.counts().executed, 1);
    EXPECT_EQ(store.clock_floor(), 0);
  }
}

}  // namespace
}  // namespace exactly::server
