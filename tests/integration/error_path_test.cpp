// One error path on a real server: a failing business logic (a UNIQUE violation included) is 500
// execution-failed with its writes rolled back and the id still staged; a storage failure is 503
// storage-unavailable; a defect of the server is 500 internal-error, never 503.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/problem.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {

const header_list json = {{"Content-Type", "text/plain"}};

std::string problem_name(const test_response& r) {
  const auto p = parse_problem(r.body);
  return p ? std::string(p->name()) : "(not a problem: " + r.body + ")";
}

// A connector with routes that fail in each way, served in open mode on 127.0.0.1:0.
// Every logic first writes a row to `attempts`, so a rollback shows in its count.
class error_path : public ::testing::Test {
 protected:
  error_path() {
    c_.db().exec(
        "CREATE TABLE attempts (id TEXT NOT NULL);"
        "CREATE TABLE unique_keys (k TEXT PRIMARY KEY)");
    add("/unique/{id}", [](server::session<std::string>& s) {
      s.db().exec("INSERT INTO unique_keys VALUES ('taken')");  // fails while 'taken' is there
      return server::stored_response{200, "text/plain", "inserted"};
    });
    add("/throws/{id}", [](server::session<std::string>&) -> server::stored_response {
      throw std::runtime_error("the logic refuses");
    });
    add("/busy/{id}", [](server::session<std::string>&) -> server::stored_response {
      throw sqlite::error(5 /* SQLITE_BUSY */, "database is locked");
    });
    // What SQLite does on a disk-full or I/O error: it rolls the whole transaction (the commit
    // group) back on its own, then the statement fails.
    add("/io-error/{id}", [](server::session<std::string>& s) -> server::stored_response {
      s.db().exec("ROLLBACK");
      throw sqlite::error(10 /* SQLITE_IOERR */, "disk I/O error");
    });
    // Deletes its own interaction row: the protocol's own UPDATE then finds no staged row, an
    // invariant of the server broken as by a defect.
    add("/defect/{id}", [](server::session<std::string>& s) {
      s.db()
          .prepare("DELETE FROM exactly_interactions WHERE id = ?")
          .bind(1, s.id().to_string())
          .run();
      return server::stored_response{200, "text/plain", "unreachable"};
    });
    port_ = http_.start();
  }

  void add(std::string route,
           std::function<server::stored_response(server::session<std::string>&)> logic) {
    c_.route<std::string>(
        std::move(route),
        [](const server::incoming_request& in) -> server::parse_result<std::string> {
          return std::string(in.body);
        },
        [logic = std::move(logic)](server::session<std::string>& s) {
          s.db().prepare("INSERT INTO attempts VALUES (?)").bind(1, s.id().to_string()).run();
          return logic(s);
        });
  }

  // Runs `sql` on the storage thread and returns its first column.
  std::int64_t count(const std::string& sql) {
    std::int64_t n = 0;
    http_.run_on_storage([&] { n = c_.db().query_int64(sql).value_or(0); });
    return n;
  }

  // A fresh id staged on `route` ("/unique/" ...).
  std::string staged(const std::string& route) {
    const std::string id = request_id::mint().to_string();
    EXPECT_EQ(client().request("PUT", route + id, "payload", json).status, 201u);
    return id;
  }

  http_client& client() {
    if (!client_)
      client_ = std::make_unique<http_client>(port_);
    return *client_;
  }

  temp_dir dir_;
  // A short wait for another writer's lock, so a held lock soon answers 503.
  server::connector c_{{.db_path = (dir_.path() / "server.db").string(),
                        .db = {.busy_timeout = std::chrono::milliseconds(200)}}};
  server::http_server http_{{.open_mode = true}, c_};
  std::uint16_t port_ = 0;
  std::unique_ptr<http_client> client_;
};

TEST_F(error_path, a_throwing_logic_is_500_execution_failed_and_commits_nothing) {
  const std::string id = staged("/throws/");
  for (int i = 0; i < 2; ++i) {
    const auto r = client().request("POST", "/throws/" + id, "", json);
    EXPECT_EQ(r.status, 500u);
    EXPECT_EQ(problem_name(r), "execution-failed");
    EXPECT_FALSE(r.has_header("exactly-once-outcome"));
  }
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 0);
  EXPECT_EQ(client().request("GET", "/throws/" + id, "", json).status, 409u);  // still staged
}

TEST_F(error_path, a_unique_violation_in_the_logic_is_500_not_503_and_rolls_the_attempt_back) {
  http_.run_on_storage([&] { c_.db().exec("INSERT INTO unique_keys VALUES ('taken')"); });
  const std::string id = staged("/unique/");
  for (int i = 0; i < 2; ++i) {
    const auto r = client().request("POST", "/unique/" + id, "", json);
    EXPECT_EQ(r.status, 500u) << "a constraint violation of the logic is not storage trouble";
    EXPECT_EQ(problem_name(r), "execution-failed");
  }
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 0) << "the attempt's other write stayed";
  EXPECT_EQ(count("SELECT count(*) FROM exactly_interactions WHERE state = 1"), 1);
  EXPECT_EQ(client().request("GET", "/unique/" + id, "", json).status, 409u);

  // The cause removed, the staged id executes, once.
  http_.run_on_storage([&] { c_.db().exec("DELETE FROM unique_keys"); });
  const auto executed = client().request("POST", "/unique/" + id, "", json);
  EXPECT_EQ(executed.status, 200u);
  EXPECT_EQ(executed.header("exactly-once-outcome"), "executed");
  EXPECT_EQ(client().request("POST", "/unique/" + id, "", json).header("exactly-once-outcome"),
            "replayed");
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM unique_keys"), 1);
}

TEST_F(error_path, a_storage_failure_in_the_logic_is_503_and_stays_staged) {
  const std::string id = staged("/busy/");
  const auto r = client().request("POST", "/busy/" + id, "", json);
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(problem_name(r), "storage-unavailable");
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_interactions WHERE state = 1"), 1);
}

TEST_F(error_path, a_group_that_storage_rolled_back_is_503_not_a_defect) {
  const std::string id = staged("/io-error/");
  const auto r = client().request("POST", "/io-error/" + id, "", json);
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(problem_name(r), "storage-unavailable");
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_interactions WHERE state = 1"), 1);
  // The server goes on: the next request opens a fresh group.
  const std::string next = staged("/unique/");
  EXPECT_EQ(client().request("POST", "/unique/" + next, "", json).status, 200u);
}

TEST_F(error_path, a_storage_failure_of_the_protocol_is_503) {
  const std::string id = staged("/unique/");
  {
    sqlite::connection other((dir_.path() / "server.db").string());
    sqlite::transaction hold(other);  // BEGIN IMMEDIATE: the write lock, held
    const auto r = client().request("POST", "/unique/" + id, "", json);
    EXPECT_EQ(r.status, 503u);
    EXPECT_EQ(problem_name(r), "storage-unavailable");
  }
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_interactions WHERE state = 1"), 1);
}

TEST_F(error_path, a_defect_of_the_server_is_500_internal_error_never_503) {
  const std::string id = staged("/defect/");
  const auto r = client().request("POST", "/defect/" + id, "", json);
  EXPECT_EQ(r.status, 500u);
  EXPECT_EQ(problem_name(r), "internal-error");
  EXPECT_FALSE(r.has_header("exactly-once-outcome"));
  EXPECT_EQ(count("SELECT count(*) FROM attempts"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_interactions WHERE state = 1"), 1);
}

}  // namespace
}  // namespace exactly::test
