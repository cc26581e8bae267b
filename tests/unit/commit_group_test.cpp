// Group commit: requests queued together share one COMMIT, each in its own savepoint, and none
// is answered unless its whole group became durable.

#include "server/src/commit_group.hpp"

#include <exactly/common/sqlite.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <filesystem>

namespace exactly::server {
namespace {

namespace asio = boost::asio;

class commit_group_test : public ::testing::Test {
 protected:
  commit_group_test()
      : dir_(std::filesystem::temp_directory_path() /
             ("exactly-group-" + request_id::mint().to_string())) {
    std::filesystem::create_directories(dir_);
    db_.emplace((dir_ / "g.db").string());
    db_->exec(
        "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
        "CREATE TABLE t (v INTEGER, parent INTEGER REFERENCES parent(id)"
        " DEFERRABLE INITIALLY DEFERRED)");
  }
  ~commit_group_test() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Queues one request per value before the storage loop runs, as concurrent arrivals do, and
  // runs them all. An empty answer means the request got no durable reply; -1 means it threw.
  std::vector<std::optional<int>> run_all(commit_groups& g, const std::vector<int>& values,
                                          std::optional<int> parent_of_first = std::nullopt) {
    std::vector<std::optional<int>> answers(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      asio::co_spawn(
          io_,
          [&, i]() -> asio::awaitable<void> {
            try {
              answers[i] = co_await g.run([&, i] {
                if (values[i] < 0)
                  throw std::runtime_error("logic failed");
                db_->prepare("INSERT INTO t VALUES (?, ?)")
                    .bind(1, values[i])
                    .bind(2, i == 0 && parent_of_first ? *parent_of_first : 0)
                    .run();
                return values[i];
              });
            } catch (const std::runtime_error&) {
              answers[i] = -1;
            }
          },
          asio::detached);
    }
    io_.run();
    io_.restart();
    return answers;
  }

  std::int64_t durable_rows() {
    sqlite::connection other((dir_ / "g.db").string());
    return other.query_int64("SELECT count(*) FROM t").value_or(-1);
  }

  std::filesystem::path dir_;
  std::optional<sqlite::connection> db_;
  asio::io_context io_;
};

TEST_F(commit_group_test, requests_queued_together_share_one_commit) {
  db_->exec("INSERT INTO parent VALUES (0)");
  commit_groups g(io_, *db_, true);
  const auto answers = run_all(g, {1, 2, 3, 4, 5});
  for (std::size_t i = 0; i < answers.size(); ++i)
    EXPECT_EQ(answers[i], static_cast<int>(i) + 1);
  EXPECT_EQ(g.stats().groups, 1);
  EXPECT_EQ(g.stats().requests, 5);
  EXPECT_EQ(durable_rows(), 5);
  EXPECT_FALSE(db_->in_transaction());
}

TEST_F(commit_group_test, ungrouped_commits_each_request_on_its_own) {
  db_->exec("INSERT INTO parent VALUES (0)");
  commit_groups g(io_, *db_, false);
  const auto answers = run_all(g, {1, 2, 3});
  EXPECT_EQ(answers[2], 3);
  EXPECT_EQ(g.stats().groups, 3);
  EXPECT_EQ(durable_rows(), 3);
}

TEST_F(commit_group_test, a_throwing_request_rolls_back_only_itself) {
  db_->exec("INSERT INTO parent VALUES (0)");
  commit_groups g(io_, *db_, true);
  const auto answers = run_all(g, {1, -5, 3});
  EXPECT_EQ(answers[0], 1);
  EXPECT_EQ(answers[1], -1);
  EXPECT_EQ(answers[2], 3);
  EXPECT_EQ(durable_rows(), 2);
  EXPECT_EQ(g.stats().groups, 1);
}

TEST_F(commit_group_test, ungrouped_a_throwing_request_leaves_no_transaction_open) {
  db_->exec("INSERT INTO parent VALUES (0)");
  commit_groups g(io_, *db_, false);
  const auto answers = run_all(g, {-1});
  EXPECT_EQ(answers[0], -1);
  EXPECT_FALSE(db_->in_transaction());  // else the write lock would be held until the next one
  EXPECT_EQ(run_all(g, {2})[0], 2);
  EXPECT_EQ(durable_rows(), 1);
}

TEST_F(commit_group_test, a_failed_commit_answers_none_of_the_group) {
  commit_groups g(io_, *db_, true);
  db_->exec("INSERT INTO parent VALUES (0)");
  // The first request's row breaks a deferred constraint: the group's COMMIT itself fails.
  const auto answers = run_all(g, {1, 2, 3}, 42);
  for (const auto& a : answers)
    EXPECT_FALSE(a.has_value());
  EXPECT_EQ(durable_rows(), 0);
  EXPECT_EQ(g.stats().failures, 1);
  EXPECT_EQ(g.stats().groups, 0);
  EXPECT_FALSE(db_->in_transaction());
  // The next group is unaffected.
  const auto next = run_all(g, {7});
  EXPECT_EQ(next[0], 7);
  EXPECT_EQ(durable_rows(), 1);
}

TEST_F(commit_group_test, connection_hooks_run_only_after_the_group_commits) {
  db_->exec("INSERT INTO parent VALUES (0)");
  commit_groups g(io_, *db_, true);
  int hooks = 0;
  std::int64_t rows_seen_by_hook = -1;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        co_await g.run([&] {
          db_->exec("INSERT INTO t VALUES (1, 0)");
          db_->after_commit([&] {  // the group's transaction is the outermost one
            ++hooks;
            rows_seen_by_hook = durable_rows();
          });
          return 0;
        });
      },
      asio::detached);
  io_.run();
  EXPECT_EQ(hooks, 1);
  EXPECT_EQ(rows_seen_by_hook, 1);
}

}  // namespace
}  // namespace exactly::server
