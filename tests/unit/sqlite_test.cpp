#include <exactly/common/migrations.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>
#include <exactly/common/sqlite_wal_pages.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

namespace exactly::sqlite {
namespace {

class sqlite_test : public ::testing::Test {
 protected:
  sqlite_test()
      : dir_(std::filesystem::temp_directory_path() /
             ("exactly-sqlite-" + request_id::mint().to_string())) {
    std::filesystem::create_directories(dir_);
  }
  ~sqlite_test() override { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "t.db").string(); }
  static std::int64_t scalar(connection& db, std::string_view sql) {
    auto& q = db.prepare(sql);
    const std::int64_t v = q.step() ? q.int64(0) : -1;
    q.reset();
    return v;
  }
  static std::string text(connection& db, std::string_view sql) {
    auto& q = db.prepare(sql);
    std::string v = q.step() ? q.text(0) : "";
    q.reset();
    return v;
  }
  std::filesystem::path dir_;
};

TEST_F(sqlite_test, defaults_are_wal_and_synchronous_full) {
  connection db(path());
  EXPECT_EQ(text(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(scalar(db, "PRAGMA synchronous"), 2);  // FULL
  connection relaxed(path(), {.sync = synchronous::normal});
  EXPECT_EQ(scalar(relaxed, "PRAGMA synchronous"), 1);
}

TEST_F(sqlite_test, the_wal_is_cut_back_to_its_size_limit_after_a_checkpoint) {
  connection db(path(), {.wal_size_limit_bytes = 64 * 1024});
  db.exec("CREATE TABLE t (b BLOB)");
  {
    transaction tx(db);
    auto& q = db.prepare("INSERT INTO t VALUES (zeroblob(100000))");
    for (int i = 0; i < 20; ++i)
      q.run();
    tx.commit();
  }
  const std::string wal = path() + "-wal";
  EXPECT_GT(std::filesystem::file_size(wal), 2'000'000u);
  db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  db.exec("INSERT INTO t VALUES (1)");  // starts the WAL over, cut to the limit
  EXPECT_LE(std::filesystem::file_size(wal), 64u * 1024 + 8192);
}

TEST_F(sqlite_test, after_commit_hooks_wait_for_the_outermost_commit) {
  connection db(path());
  std::vector<std::string> ran;
  db.after_commit([&] { ran.push_back("no transaction: at once"); });
  EXPECT_EQ(ran.size(), 1u);
  {
    transaction outer(db);
    db.after_commit([&] { ran.push_back("outer"); });
    {
      transaction kept(db);
      db.after_commit([&] { ran.push_back("released savepoint"); });
      kept.commit();
    }
    {
      transaction dropped(db);
      db.after_commit([&] { ran.push_back("rolled back savepoint"); });
      {
        transaction inner(db);
        db.after_commit([&] { ran.push_back("inside the rolled back savepoint"); });
        inner.commit();
      }
    }
    EXPECT_EQ(ran.size(), 1u);  // nothing before the outer COMMIT
    outer.commit();
  }
  EXPECT_EQ(ran,
            (std::vector<std::string>{"no transaction: at once", "outer", "released savepoint"}));
  {
    transaction rolled_back(db);
    db.after_commit([&] { ran.push_back("rolled back transaction"); });
  }
  {
    transaction next(db);
    next.commit();
  }
  EXPECT_EQ(ran.size(), 3u);
}

TEST_F(sqlite_test, transaction_rolls_back_unless_committed) {
  {
    connection db(path());
    db.exec("CREATE TABLE t (v INTEGER)");
    {
      transaction tx(db);
      db.prepare("INSERT INTO t VALUES (?)").bind(1, 1).run();
    }  // no commit
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM t"), 0);
    transaction tx(db);
    db.prepare("INSERT INTO t VALUES (?)").bind(1, 2).run();
    tx.commit();
  }
  connection reopened(path());
  EXPECT_EQ(scalar(reopened, "SELECT sum(v) FROM t"), 2);
}

TEST_F(sqlite_test, a_nested_transaction_is_a_savepoint_durable_only_with_the_outer_one) {
  connection db(path());
  connection other(path());
  db.exec("CREATE TABLE t (v INTEGER)");
  {
    transaction outer(db);
    EXPECT_FALSE(outer.is_savepoint());
    {
      transaction inner(db);
      EXPECT_TRUE(inner.is_savepoint());
      EXPECT_EQ(db.transaction_depth(), 2);
      db.exec("INSERT INTO t VALUES (1)");
      inner.commit();
    }
    EXPECT_EQ(db.transaction_depth(), 1);
    EXPECT_TRUE(db.in_transaction());
    EXPECT_EQ(scalar(other, "SELECT count(*) FROM t"), 0);  // released, not committed
  }  // the outer one rolls back: the released savepoint goes with it
  EXPECT_EQ(db.transaction_depth(), 0);
  EXPECT_FALSE(db.in_transaction());
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM t"), 0);
}

TEST_F(sqlite_test, a_savepoint_rolled_back_undoes_only_its_own_writes) {
  connection db(path());
  db.exec("CREATE TABLE t (v INTEGER)");
  transaction outer(db);
  for (int v = 1; v <= 3; ++v) {
    transaction job(db);
    db.prepare("INSERT INTO t VALUES (?)").bind(1, v).run();
    if (v != 2)
      job.commit();
  }
  outer.commit();
  connection other(path());
  EXPECT_EQ(scalar(other, "SELECT count(*) FROM t"), 2);
  EXPECT_EQ(scalar(other, "SELECT sum(v) FROM t"), 4);
}

TEST_F(sqlite_test, statement_cache_reuses_and_resets) {
  connection db(path());
  db.exec("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)");
  statement& a = db.prepare("SELECT v FROM t ORDER BY v");
  ASSERT_TRUE(a.step());
  EXPECT_EQ(a.int64(0), 1);
  statement& b = db.prepare("SELECT v FROM t ORDER BY v");  // same object, reset
  EXPECT_EQ(&a, &b);
  ASSERT_TRUE(b.step());
  EXPECT_EQ(b.int64(0), 1);
  b.reset();
}

TEST_F(sqlite_test, binds_text_blobs_with_nul_and_nulls) {
  connection db(path());
  db.exec("CREATE TABLE t (a TEXT, b BLOB, c INTEGER)");
  const std::string blob("a\0b\0c", 5);
  db.prepare("INSERT INTO t VALUES (?, ?, ?)")
      .bind(1, "x")
      .bind_blob(2, blob)
      .bind(3, nullptr)
      .run();
  auto& q = db.prepare("SELECT a, b, c FROM t");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text(0), "x");
  EXPECT_EQ(q.text(1), blob);
  EXPECT_TRUE(q.is_null(2));
  EXPECT_FALSE(q.step());
  q.reset();
}

TEST_F(sqlite_test, errors_carry_the_sqlite_category) {
  connection db(path());
  try {
    db.exec("THIS IS NOT SQL");
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_STREQ(e.code().category().name(), "sqlite");
    EXPECT_FALSE(e.busy());
  }
  EXPECT_THROW(db.prepare("SELECT * FROM missing"), error);
}

TEST_F(sqlite_test, a_second_writer_is_busy) {
  connection first(path());
  connection second(path(), {.busy_timeout = std::chrono::milliseconds(0)});
  transaction hold(first);
  try {
    transaction blocked(second);
    FAIL() << "second BEGIN IMMEDIATE succeeded";
  } catch (const error& e) {
    EXPECT_TRUE(e.busy());
  }
}

TEST_F(sqlite_test, storage_failure_tells_the_storage_apart_from_what_the_sql_asked) {
  connection db(path());
  db.exec("CREATE TABLE u (k INTEGER PRIMARY KEY)");
  db.exec("INSERT INTO u VALUES (1)");
  const auto failure_of = [&](std::string_view sql) -> std::optional<error> {
    try {
      db.exec(sql);
    } catch (const error& e) {
      return e;
    }
    return std::nullopt;
  };
  const auto unique = failure_of("INSERT INTO u VALUES (1)");
  ASSERT_TRUE(unique);
  EXPECT_FALSE(unique->storage_failure()) << "a UNIQUE violation is the SQL's, not the storage's";
  const auto syntax = failure_of("THIS IS NOT SQL");
  ASSERT_TRUE(syntax);
  EXPECT_FALSE(syntax->storage_failure());

  connection other(path(), {.busy_timeout = std::chrono::milliseconds(0)});
  transaction hold(db);
  try {
    transaction blocked(other);
    FAIL() << "second BEGIN IMMEDIATE succeeded";
  } catch (const error& e) {
    EXPECT_TRUE(e.storage_failure()) << "a lock held elsewhere is storage trouble";
  }
  for (const int code : {10 /* IOERR */, 13 /* FULL */, 8 /* READONLY */, 11 /* CORRUPT */,
                         14 /* CANTOPEN */, 7 /* NOMEM */, 26 /* NOTADB */, 6 /* LOCKED */}) {
    EXPECT_TRUE(error(code, "x").storage_failure()) << code;
  }
  EXPECT_TRUE(error(10 | (4 << 8), "x").storage_failure()) << "an extended I/O error code";
  EXPECT_FALSE(error(19 /* CONSTRAINT */, "x").storage_failure());
  EXPECT_FALSE(error(1 /* ERROR */, "x").storage_failure());
}

TEST_F(sqlite_test, query_int64_binds_and_tells_no_row) {
  connection db(path());
  db.exec("CREATE TABLE t (k TEXT, v INTEGER); INSERT INTO t VALUES ('a', 7)");
  EXPECT_EQ(db.query_int64("SELECT v FROM t WHERE k = ?", "a"), 7);
  EXPECT_EQ(db.query_int64("SELECT v FROM t WHERE k = ?", "b"), std::nullopt);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 1);
}

constexpr migration v1[] = {{1, "CREATE TABLE a (x INTEGER)"}};
constexpr migration v2[] = {{1, "CREATE TABLE a (x INTEGER)"}, {2, "ALTER TABLE a ADD y INTEGER"}};

TEST_F(sqlite_test, migrations_apply_in_order_once_per_component) {
  connection db(path());
  migrate(db, "one", v1);
  EXPECT_EQ(schema_version(db, "one"), 1);
  migrate(db, "one", v2);
  EXPECT_EQ(schema_version(db, "one"), 2);
  migrate(db, "one", v2);  // no-op
  EXPECT_EQ(schema_version(db, "one"), 2);
  db.exec("INSERT INTO a (x, y) VALUES (1, 2)");
  EXPECT_EQ(schema_version(db, "other"), 0);
  constexpr migration other[] = {{1, "CREATE TABLE b (z INTEGER)"}};
  migrate(db, "other", other);
  EXPECT_EQ(schema_version(db, "other"), 1);
  EXPECT_EQ(schema_version(db, "one"), 2);
}

TEST_F(sqlite_test, a_newer_database_is_refused) {
  connection db(path());
  migrate(db, "one", v2);
  EXPECT_THROW(migrate(db, "one", v1), std::runtime_error);
}

TEST_F(sqlite_test, a_failing_migration_leaves_nothing_half_applied) {
  connection db(path());
  migrate(db, "one", v1);
  constexpr migration broken[] = {{1, "CREATE TABLE a (x INTEGER)"},
                                  {2, "CREATE TABLE c (v INTEGER); NOT SQL"}};
  EXPECT_THROW(migrate(db, "one", broken), error);
  EXPECT_EQ(schema_version(db, "one"), 1);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM sqlite_master WHERE name = 'c'"), 0);
}

// The one knob keeps the defaults' proportions: at 4000 pages it is the defaults, and a WAL of N
// pages (a 32-byte header, 4096 + 24 bytes a frame) always fits under the size it cuts back to.
TEST(with_wal_pages, is_the_defaults_at_4000_pages_and_keeps_their_proportions) {
  const options defaults;
  const options same = with_wal_pages({.wal = false,
                                       .sync = synchronous::normal,
                                       .busy_timeout = std::chrono::milliseconds(7),
                                       .foreign_keys = false},
                                      4000);
  EXPECT_EQ(same.checkpoint_pages, defaults.checkpoint_pages);
  EXPECT_EQ(same.finish_checkpoint_pages, defaults.finish_checkpoint_pages);
  EXPECT_EQ(same.wal_size_limit_bytes, defaults.wal_size_limit_bytes);
  // The rest kept.
  EXPECT_FALSE(same.wal);
  EXPECT_EQ(same.sync, synchronous::normal);
  EXPECT_EQ(same.busy_timeout, std::chrono::milliseconds(7));
  EXPECT_FALSE(same.foreign_keys);
  for (const int pages : {100, 1000, 4000, 10000, 1 << 20}) {
    const options o = with_wal_pages({}, pages);
    EXPECT_EQ(o.checkpoint_pages, pages);
    EXPECT_EQ(o.finish_checkpoint_pages, 4 * pages);
    EXPECT_EQ(o.wal_size_limit_bytes, std::int64_t{pages} * (16 << 20) / 4000) << pages;
    EXPECT_GT(o.wal_size_limit_bytes, 32 + std::int64_t{pages} * (4096 + 24)) << pages;
  }
}

}  // namespace
}  // namespace exactly::sqlite
