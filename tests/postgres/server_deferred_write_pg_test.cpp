// The connector's writes that go out with a request's RELEASE on PostgreSQL (the staged row, the
// executed row, the tombstone): when one fails, its request fails and leaves nothing behind, the
// id stays as it was, and the next request, and the same one tried again, go through. Counted:
// rows by state, executions, answers.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include "pg_cluster.hpp"

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {

class server_deferred_write_postgres : public ::testing::Test {
 protected:
  server_deferred_write_postgres() {
    cfg_.postgres = test_cluster().fresh_schema();
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

TEST_F(server_deferred_write_postgres, a_staged_row_that_fails_to_insert_fails_its_put) {
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

TEST_F(server_deferred_write_postgres, an_executed_row_that_fails_to_write_fails_its_post) {
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

TEST_F(server_deferred_write_postgres, a_tombstone_that_fails_to_write_fails_its_delete) {
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

}  // namespace
}  // namespace exactly::test
