// The connector's writes that go out with a request's RELEASE on PostgreSQL (the staged row, the
// executed row, the tombstone): when one fails, its request fails and leaves nothing behind, the
// id stays as it was, and the next request, and the same one tried again, go through. Counted:
// rows by state, executions, answers. With commit groups and without (server_options::group_commit:
// each request a group of one, whose COMMIT carries its RELEASE).
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include "pg_cluster.hpp"

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace exactly::test {
namespace {

// GetParam(): server_options::group_commit.
class server_deferred_write_postgres : public ::testing::TestWithParam<bool> {
 protected:
  server_deferred_write_postgres() {
    cfg_.postgres = test_cluster().fresh_schema();
    cfg_.group_commit = GetParam();
    server_ = std::make_unique<echo_server>(cfg_);
    admin_ = std::make_unique<pg::connection>(pg::options{cfg_.postgres});
    // Rows of the ids in `refused` cannot be written (inserted, or updated into `state`).
    admin_->exec(
        "CREATE TABLE refused (id TEXT, state SMALLINT);"
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " IF EXISTS (SELECT 1 FROM refused WHERE id = NEW.id AND state = NEW.state) THEN"
        "  RAISE EXCEPTION 'refused: %', NEW.id; END IF; RETURN NEW; END $$;"
        "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON exactly_interactions"
        " FOR EACH ROW EXECUTE FUNCTION refuse();");
  }

  std::string mint() { return request_id::mint(server_->now_ms()).to_string(); }
  void refuse(const std::string& id, int state) {
    admin_->execute("INSERT INTO refused VALUES ($1, $2)", id, state);
  }
  void allow(const std::string& id) { admin_->execute("DELETE FROM refused WHERE id = $1", id); }
  // The id's row state (1 staged, 2 executed, 3 tombstone), 0 without a row.
  std::int64_t state_of(const std::string& id) {
    return admin_->query_int64("SELECT state FROM exactly_interactions WHERE id = $1", id)
        .value_or(0);
  }
  unsigned send(const std::string& method, const std::string& id) {
    const std::string body = method == "PUT" ? R"({"status":200,"reply":"r"})" : "";
    return http_client(server_->port()).request(method, path_of(id), body, alice).status;
  }

  echo_server_config cfg_;
  std::unique_ptr<echo_server> server_;
  std::unique_ptr<pg::connection> admin_;
};

TEST_P(server_deferred_write_postgres, a_staged_row_that_fails_to_insert_fails_its_put) {
  const std::string id = mint();
  refuse(id, 1);
  EXPECT_EQ(send("PUT", id), 500u);
  EXPECT_EQ(state_of(id), 0);
  EXPECT_EQ(send("PUT", mint()), 201u);  // the next request goes through
  allow(id);
  EXPECT_EQ(send("PUT", id), 201u);
  EXPECT_EQ(send("POST", id), 200u);
  EXPECT_EQ(server_->executions(id), 1);
}

TEST_P(server_deferred_write_postgres, an_executed_row_that_fails_to_write_fails_its_post) {
  const std::string id = mint();
  ASSERT_EQ(send("PUT", id), 201u);
  refuse(id, 2);
  EXPECT_EQ(send("POST", id), 500u);
  EXPECT_EQ(send("POST", id), 500u);
  EXPECT_EQ(server_->executions(id), 0);  // the logic's writes rolled back with it
  EXPECT_EQ(state_of(id), 1);             // still staged
  allow(id);
  EXPECT_EQ(send("POST", id), 200u);
  EXPECT_EQ(send("POST", id), 200u);  // a replay
  EXPECT_EQ(server_->executions(id), 1);
  EXPECT_EQ(state_of(id), 2);
}

TEST_P(server_deferred_write_postgres, a_tombstone_that_fails_to_write_fails_its_delete) {
  const std::string id = mint();
  ASSERT_EQ(send("PUT", id), 201u);
  ASSERT_EQ(send("POST", id), 200u);
  refuse(id, 3);
  EXPECT_EQ(send("DELETE", id), 500u);
  EXPECT_EQ(state_of(id), 2);  // the response still there
  EXPECT_EQ(send("GET", id), 200u);
  allow(id);
  EXPECT_EQ(send("DELETE", id), 204u);
  EXPECT_EQ(state_of(id), 3);
  EXPECT_EQ(server_->executions(id), 1);
}

// A request answered 500 because its own writes failed at the group's next round trip (its
// RELEASE went with it) is not among the requests the groups answered
// (exactly_commit_group_requests_total), though its group committed.
TEST_P(server_deferred_write_postgres, a_request_that_fails_alone_is_not_counted_as_answered) {
  const std::string id = mint();
  refuse(id, 1);
  const std::int64_t before = server_->metric("exactly_commit_group_requests_total");
  EXPECT_EQ(send("PUT", id), 500u);
  EXPECT_EQ(server_->metric("exactly_commit_group_requests_total"), before);
  allow(id);
  EXPECT_EQ(send("PUT", id), 201u);
  refuse(id, 2);
  EXPECT_EQ(send("POST", id), 500u);
  EXPECT_EQ(server_->metric("exactly_commit_group_requests_total"), before + 1);
  allow(id);
  EXPECT_EQ(send("POST", id), 200u);
  EXPECT_EQ(server_->metric("exactly_commit_group_requests_total"), before + 2);
}

// Concurrent requests share commit groups, where a request's writes and RELEASE go out with the
// group's next round trip (the next request's lookup, or the COMMIT): a refused one fails alone,
// its logic's writes rolled back and its execution not counted, and the others are answered and
// counted as if it had never been. Ungrouped, each request is a group of its own.
TEST_P(server_deferred_write_postgres, a_refused_write_among_concurrent_requests_fails_alone) {
  cfg_.max_staged_per_principal = 100;
  cfg_.max_staged_bytes_per_principal = 1 << 20;
  server_ = std::make_unique<echo_server>(cfg_);
  // Each of `ids` sent `method` at once by a client of its own: the statuses, in order.
  const auto at_once = [&](const std::string& method, const std::vector<std::string>& ids) {
    std::vector<unsigned> status(ids.size());
    std::vector<std::jthread> clients;
    for (std::size_t i = 0; i < ids.size(); ++i)
      clients.emplace_back([&, i] { status[i] = send(method, ids[i]); });
    clients.clear();  // joined
    return status;
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> ids(25);
    for (auto& id : ids)
      id = mint();
    const std::size_t bad_put = 12, bad_post = 3, bad_delete = 7;
    refuse(ids[bad_put], 1);
    refuse(ids[bad_post], 2);
    refuse(ids[bad_delete], 3);
    const std::vector<unsigned> put = at_once("PUT", ids);
    const std::vector<unsigned> post = at_once("POST", ids);
    const std::vector<unsigned> del = at_once("DELETE", ids);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(put[i], i == bad_put ? 500u : 201u) << "PUT " << i;
      EXPECT_EQ(post[i], i == bad_put ? 404u : i == bad_post ? 500u : 200u) << "POST " << i;
      EXPECT_EQ(del[i], i == bad_delete ? 500u : 204u) << "DELETE " << i;
      EXPECT_EQ(server_->executions(ids[i]), i == bad_put || i == bad_post ? 0 : 1) << i;
    }
    EXPECT_EQ(state_of(ids[bad_delete]), 2);  // its response still there
    EXPECT_EQ(state_of(ids[bad_put]), 3);     // a DELETE of an unknown id leaves a tombstone
    const server::state_counts c = server_->rows();
    EXPECT_EQ(c.staged, 0);
    EXPECT_EQ(c.executed, 1 + round);
    EXPECT_EQ(c.tombstone, 24 * (round + 1));
  }
}

INSTANTIATE_TEST_SUITE_P(commit_groups, server_deferred_write_postgres, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "grouped" : "ungrouped";
                         });

}  // namespace
}  // namespace exactly::test
