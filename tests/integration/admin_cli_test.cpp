// exactly-admin run as an operator would, against real server databases on both engines: what it
// prints, what it refuses, and what it changes in the database (rows counted afterwards).
#include "client/src/invocation_store.hpp"
#include "client/src/queue_store.hpp"
#include "pg_cluster.hpp"
#include "server/src/pg_store.hpp"
#include "server/src/sqlite_store.hpp"
#include "tools/admin/admin_db.hpp"

#include <exactly/common/digest.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/storage_error.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace exactly::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct run_result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs exactly-admin with `args` (no shell), capturing stdout and stderr.
run_result admin(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / ("admin-run-" + request_id::mint().to_string());
  fs::create_directories(dir);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  // posix_spawn: an in-process server's threads may hold a lock a forked copy would need.
  std::string bin = EXACTLY_ADMIN;
  std::vector<std::string> copy = args;
  std::vector<char*> argv{bin.data()};
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    fs::remove_all(dir);
    throw std::runtime_error("cannot start " + bin + ": " + std::strerror(spawned));
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  run_result r{WIFEXITED(st) ? WEXITSTATUS(st) : 128, slurp(out), slurp(err)};
  fs::remove_all(dir);
  return r;
}

std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Rows a server writes: staged a (alice, two hours ago), executed b (bob, 402, now),
// tombstone c; outbox messages 1 and 2 (2 retried), dead letters 3 and 4.
void seed(interaction_store& s) {
  const std::int64_t t = now();
  auto tx = s.begin(true);
  s.insert_staged("/pay/{id}", "a", "alice", t - 7'200'000, t - 7'200'000, "application/json",
                  R"({"amount":5})", sha256(R"({"amount":5})"));
  s.insert_staged("/pay/{id}", "b", "bob", t, t, "application/json", "{}", sha256("{}"));
  s.mark_executed("/pay/{id}", "b", {402, "application/json", R"({"reason":"funds"})"}, t);
  s.put_tombstone("/pay/{id}", "c", "alice", t, tombstone_reason::deleted, t, std::nullopt);
  for (int i = 1; i <= 4; ++i)
    s.outbox_add("settle", R"({"n":)" + std::to_string(i) + "}", "/pay/{id} x", t);
  s.outbox_retry_later(2, t + 60'000, "ledger busy");
  s.outbox_dead_letter(3, "ledger frozen", t);
  s.outbox_dead_letter(4, "no handler registered for message type settle", t);
  tx->commit();
}

class admin_cli_sqlite : public ::testing::Test {
 protected:
  admin_cli_sqlite() {
    fs::create_directories(dir_);
    sqlite_store s(db_, sqlite::options{});
    seed(s);
  }
  ~admin_cli_sqlite() override { fs::remove_all(dir_); }
  run_result server(std::vector<std::string> args) {
    args.insert(args.begin(), {"server", "--sqlite", db_});
    return admin(args);
  }
  std::int64_t count(const std::string& sql) {
    sqlite::connection c(db_);
    return c.query_int64(sql).value_or(-1);
  }

  const fs::path dir_ =
      fs::temp_directory_path() / ("exactly-admin-" + request_id::mint().to_string());
  const std::string db_ = (dir_ / "server.db").string();
};

TEST_F(admin_cli_sqlite, lists_interactions_with_counts_and_filters) {
  auto r = server({"interactions"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("staged 1, executed 1, tombstone 1; outbox 2, dead letters 2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("alice"), std::string::npos);
  EXPECT_NE(r.out.find("402"), std::string::npos);

  r = server({"interactions", "--state", "executed", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["interactions"].size(), 1u);
  EXPECT_EQ(j["interactions"][0]["id"], "b");
  EXPECT_EQ(j["interactions"][0]["response_status"], 402);
  EXPECT_EQ(j["counts"]["dead_letters"], 2);

  j = json::parse(server({"interactions", "--older-than", "1h", "--json"}).out);
  ASSERT_EQ(j["interactions"].size(), 1u);
  EXPECT_EQ(j["interactions"][0]["id"], "a");
  EXPECT_GE(j["interactions"][0]["age_ms"].get<std::int64_t>(), 7'200'000);

  j = json::parse(
      server({"interactions", "--owner", "alice", "--route", "/pay/{id}", "--json"}).out);
  EXPECT_EQ(j["interactions"].size(), 2u);
  j = json::parse(server({"interactions", "--limit", "1", "--oldest-first", "--json"}).out);
  ASSERT_EQ(j["interactions"].size(), 1u);
  EXPECT_EQ(j["interactions"][0]["id"], "a");
}

TEST_F(admin_cli_sqlite, shows_one_interaction_with_its_bodies) {
  auto r = server({"interaction", "/pay/{id}", "a", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["state"], "staged");
  EXPECT_EQ(j["request_body"]["text"], R"({"amount":5})");
  EXPECT_EQ(j["request_sha256"], to_hex(sha256(R"({"amount":5})")));
  r = server({"interaction", "/pay/{id}", "b"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(R"({"reason":"funds"})"), std::string::npos) << r.out;
  r = server({"interaction", "/pay/{id}", "nope"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no interaction /pay/{id} nope"), std::string::npos) << r.err;
}

TEST_F(admin_cli_sqlite, lists_the_outbox_and_dead_letters) {
  auto r = server({"outbox", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["outbox"].size(), 2u);
  EXPECT_EQ(j["outbox"][1]["last_error"], "ledger busy");
  r = server({"dead-letters"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("ledger frozen"), std::string::npos) << r.out;
  r = server({"dead-letter", "show", "3", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["body"], R"({"n":3})");
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(server({"dead-letter", "show", "9"}).status, 1);
}

TEST_F(admin_cli_sqlite, replays_a_dead_letter_into_the_outbox_and_logs_it) {
  const std::string audit = (dir_ / "audit.log").string();
  auto r = server({"--audit-log", audit, "dead-letter", "replay", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "replayed 3\n");
  EXPECT_NE(r.err.find("replayed dead letter 3 (settle from /pay/{id} x)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("sqlite:" + db_), std::string::npos);
  EXPECT_NE(slurp(audit).find("replayed dead letter 3"), std::string::npos);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters WHERE seq = 3"), 0);
  EXPECT_EQ(count("SELECT attempts FROM exactly_server_outbox WHERE seq = 3"), 0);
  EXPECT_EQ(count("SELECT next_attempt_ms FROM exactly_server_outbox WHERE seq = 3"), 0);
  // Again (a second operator): already back in the outbox, said so, done (status 0), nothing
  // changed or logged.
  r = server({"--audit-log", audit, "dead-letter", "replay", "3"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("dead letter 3 is already back in the outbox"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no dead letter"), std::string::npos) << r.err;
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_outbox"), 3);
  // A sequence number that is nowhere: not found, status 1.
  r = server({"dead-letter", "replay", "99"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no dead letter 99"), std::string::npos) << r.err;
  // --all takes the rest.
  ASSERT_EQ(server({"dead-letter", "replay", "--all"}).status, 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_outbox"), 4);
}

TEST_F(admin_cli_sqlite, the_audit_log_is_created_private_and_opened_before_any_change) {
  const std::string audit = (dir_ / "audit.log").string();
  ASSERT_EQ(server({"--audit-log", audit, "dead-letter", "replay", "3"}).status, 0);
  EXPECT_EQ(fs::status(audit).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_NE(slurp(audit).find("replayed dead letter 3"), std::string::npos);

  // An audit log that cannot be opened: refused before anything changes.
  const std::string unwritable = (dir_ / "no-such-dir" / "audit.log").string();
  auto r = server({"--audit-log", unwritable, "dead-letter", "replay", "4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot open the audit log " + unwritable), std::string::npos) << r.err;
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters WHERE seq = 4"), 1);
  r = server({"--audit-log", unwritable, "dead-letter", "drop", "--all", "--yes"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters WHERE seq = 4"), 1);
  EXPECT_FALSE(fs::exists(unwritable));
}

TEST_F(admin_cli_sqlite, remote_texts_cannot_drive_the_terminal) {
  {
    sqlite_store s(db_, sqlite::options{});
    auto tx = s.begin(true);
    const std::int64_t t = now();
    s.outbox_add("settle\x1b[31m", "{\"n\":\"\x1b[2J\r\"}\n{\"line\":2}", "src\r", t);
    s.outbox_dead_letter(5, "frozen\x1b[2J\rover\x7f", t);
    tx->commit();
  }
  const auto clean = [](const run_result& r) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x7f'), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  };
  auto r = server({"dead-letters"});
  clean(r);
  EXPECT_NE(r.out.find(R"(frozen\x1b[2J\rover\x7f)"), std::string::npos) << r.out;
  r = server({"dead-letter", "show", "5"});
  clean(r);
  EXPECT_NE(r.out.find(R"(settle\x1b[31m)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n{\"line\":2}"), std::string::npos) << r.out;  // a body keeps its lines
  // --json is JSON's business: the texts round-trip.
  r = server({"dead-letter", "show", "5", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["error"], "frozen\x1b[2J\rover\x7f");
  // The change log on stderr too.
  clean(server({"dead-letter", "drop", "5", "--yes"}));

  const std::string cdb = (dir_ / "client.db").string();
  {
    sqlite::connection c(cdb);
    client::queue_store q(c);
    client::invocation_store inv(c);
    q.add_error("billing\x1b]0;x\x07", {"e1", "bill\x1b[31m", {}, {{"note", "\x1b[2J\r\x7f"}}}, 1,
                "boom\x1b[2J\r\nsecond line", now());
  }
  r = admin({"client", "--sqlite", cdb, "errors"});
  clean(r);
  EXPECT_NE(r.out.find(R"(boom\x1b[2J\r\nsecond line)"), std::string::npos) << r.out;
  r = admin({"client", "--sqlite", cdb, "error", "show", "1"});
  clean(r);
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  r = admin({"client", "--sqlite", cdb, "queues"});
  clean(r);
}

TEST_F(admin_cli_sqlite, print_config_hides_the_postgres_password) {
  const std::vector<std::pair<std::string, std::string>> commands{{"server", "outbox"},
                                                                  {"client", "queues"}};
  for (const auto& [which, listing] : commands) {
    const auto r =
        admin({"--print-config", which, "--postgres", "host=x password=hunter2", listing});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(secret)"), std::string::npos) << r.out;
  }
}

TEST_F(admin_cli_sqlite, a_write_through_the_read_only_access_fails) {
  admin::admin_db ro(admin::target{db_, ""}, admin::access::read_only);
  EXPECT_THROW(ro.db().execute("DELETE FROM exactly_server_dead_letters"), storage_error);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters"), 2);
  admin::admin_db rw(admin::target{db_, ""}, admin::access::read_write);
  EXPECT_EQ(rw.db().execute("DELETE FROM exactly_server_dead_letters WHERE seq = 4"), 1);
}

TEST_F(admin_cli_sqlite, drops_only_with_yes) {
  auto r = server({"dead-letter", "drop", "4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("add --yes"), std::string::npos) << r.err;
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters"), 2);
  r = server({"dead-letter", "drop", "4", "--yes"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("dropped dead letter 4"), std::string::npos) << r.err;
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters WHERE seq = 4"), 0);
}

TEST_F(admin_cli_sqlite, refuses_bad_input_with_a_clear_message) {
  auto r = server({"interactions", "--state", "stuck"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown state 'stuck'"), std::string::npos) << r.err;
  r = server({"interactions", "--older-than", "10"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad duration '10'"), std::string::npos) << r.err;
  r = server({"dead-letter", "replay"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("name SEQ... or --all"), std::string::npos) << r.err;
}

TEST_F(admin_cli_sqlite, a_missing_or_foreign_database_is_named_and_left_alone) {
  const std::string missing = (dir_ / "missing.db").string();
  auto r = admin({"server", "--sqlite", missing, "outbox"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no database file at " + missing), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(missing));  // not created
  const std::string other = (dir_ / "other.db").string();
  {
    sqlite::connection c(other);
    c.exec("CREATE TABLE unrelated (x INTEGER)");
  }
  r = admin({"server", "--sqlite", other, "dead-letter", "replay", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds no exactly server tables"), std::string::npos) << r.err;
  sqlite::connection c(other);
  EXPECT_EQ(c.query_int64("SELECT count(*) FROM sqlite_master"), 1);  // nothing migrated
}

TEST_F(admin_cli_sqlite, a_listing_writes_nothing) {
  const auto before = fs::last_write_time(db_);
  ASSERT_EQ(server({"interactions"}).status, 0);
  ASSERT_EQ(server({"dead-letters"}).status, 0);
  EXPECT_EQ(fs::last_write_time(db_), before);
  const fs::path wal = db_ + "-wal";  // where a write in WAL mode would go first
  EXPECT_TRUE(!fs::exists(wal) || fs::file_size(wal) == 0);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_server_dead_letters"), 2);
}

TEST(admin_cli_postgres, lists_and_replays_on_postgres) {
  const std::string conninfo = test::test_cluster().fresh_schema();
  {
    pg_store s(pg::options{conninfo});
    seed(s);
  }
  auto r = admin({"server", "--postgres", conninfo, "dead-letters", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["dead_letters"].size(), 2u);
  EXPECT_EQ(j["dead_letters"][0]["error"], "ledger frozen");
  r = admin({"server", "--postgres", conninfo, "interactions", "--state", "staged", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["interactions"].size(), 1u);

  // A password in the connection string stays out of the log (the test cluster ignores it).
  r = admin({"server", "--postgres", conninfo + " password=s3cret", "dead-letter", "replay", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("replayed dead letter 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("password=***"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << r.err;
  r = admin({"server", "--postgres", conninfo, "dead-letter", "drop", "4", "--yes"});
  ASSERT_EQ(r.status, 0) << r.err;
  pg::connection c(pg::options{conninfo});
  EXPECT_EQ(c.query_int64("SELECT count(*) FROM exactly_server_dead_letters"), 0);
  // The read-only access a listing uses refuses writes.
  {
    admin::admin_db ro(admin::target{"", conninfo}, admin::access::read_only);
    EXPECT_THROW(ro.db().execute("DELETE FROM exactly_server_outbox"), storage_error);
  }
  EXPECT_EQ(c.query_int64("SELECT attempts FROM exactly_server_outbox WHERE seq = 3"), 0);
  EXPECT_EQ(c.query_int64("SELECT count(*) FROM exactly_server_outbox"), 3);
}

// A client database: endpoint "billing" with one queued message and error-queue entries 1 and 2,
// one unfinished invocation.
void seed_client(const database& db) {
  client::queue_store q(db);
  client::invocation_store s(db);
  const std::int64_t t = now();
  q.enqueue("billing", {"m1", "bill_customer", {}, {{"order_id", "o-1"}}}, t);
  q.add_error("billing", {"e1", "bill_customer", {}, {{"order_id", "o-2"}}}, 1,
              "invoke_http PUT failed: connect: Connection refused", t);
  q.add_error("billing", {"e2", "bill_customer", {}, {{"order_id", "o-3"}}}, 1,
              "invoke_http PUT failed: connect: Connection refused", t);
  s.add({"r1", "billing", "http://pay:1/payment/authorize/r1", {"f1", "process", {}, {}}, 0}, t);
}

std::int64_t count_on(const database& db, const std::string& sql) {
  return db.query_int64(sql).value_or(-1);
}

TEST_F(admin_cli_sqlite, client_lists_queues_invocations_and_errors) {
  const std::string cdb = (dir_ / "client.db").string();
  {
    sqlite::connection c(cdb);
    seed_client(c);
  }
  const auto client = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"client", "--sqlite", cdb});
    return admin(args);
  };
  auto r = client({"queues", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["queues"].size(), 1u);
  EXPECT_EQ(j["queues"][0]["endpoint"], "billing");
  EXPECT_EQ(j["queues"][0]["due"], 1);
  EXPECT_EQ(j["queues"][0]["errors"], 2);
  EXPECT_EQ(j["invocations"]["post_pending"], 1);
  EXPECT_EQ(j["invocations"]["restage_pending"], 0);

  r = client({"invocations", "--state", "post_pending", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = json::parse(r.out);
  ASSERT_EQ(j["invocations"].size(), 1u);
  EXPECT_EQ(j["invocations"][0]["request_id"], "r1");
  r = client({"invocations", "--state", "restage_pending", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["invocations"].size(), 0u);
  r = client({"invocations", "--state", "stuck"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown state 'stuck'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("post_pending, restage_pending, awaiting_follow_up or delete_pending"),
            std::string::npos)
      << r.err;

  r = client({"errors"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Connection refused"), std::string::npos) << r.out;
  r = client({"error", "show", "1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["message_id"], "e1");
  EXPECT_EQ(j["body"]["order_id"], "o-2");
  EXPECT_EQ(client({"error", "show", "9"}).status, 1);

  // The server's tables are not a client's: told apart.
  r = admin({"client", "--sqlite", db_, "errors"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds no exactly client tables"), std::string::npos) << r.err;
}

TEST_F(admin_cli_sqlite, client_requeues_and_drops_error_queue_entries) {
  const std::string cdb = (dir_ / "client.db").string();
  sqlite::connection c(cdb);
  seed_client(c);
  const auto client = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"client", "--sqlite", cdb});
    return admin(args);
  };
  const std::string audit = (dir_ / "audit.log").string();
  auto r = client({"--audit-log", audit, "error", "requeue", "1", "7"});
  EXPECT_EQ(r.status, 1);  // 7 is not there
  EXPECT_EQ(r.out, "requeued 1\n");
  EXPECT_NE(r.err.find("requeued error-queue entry 1 (bill_customer for billing, message e1)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no error-queue entry 7"), std::string::npos) << r.err;
  EXPECT_NE(slurp(audit).find("requeued error-queue entry 1"), std::string::npos);
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_error_queue"), 1);
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_queue WHERE message_id = 'e1'"), 1);

  r = client({"error", "drop", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("add --yes"), std::string::npos) << r.err;
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_error_queue"), 1);
  r = client({"error", "drop", "2", "--yes"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(R"(body {"order_id":"o-3"})"), std::string::npos) << r.err;
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_error_queue"), 0);
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_queue"), 2);
}

TEST_F(admin_cli_sqlite, client_repairs_refuse_a_database_they_do_not_know) {
  // No client tables: refused, nothing created.
  const std::string empty = (dir_ / "empty.db").string();
  {
    sqlite::connection c(empty);
    c.exec("CREATE TABLE unrelated (x INTEGER)");
  }
  auto r = admin({"client", "--sqlite", empty, "error", "requeue", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds no exactly client tables"), std::string::npos) << r.err;
  {
    sqlite::connection c(empty);
    EXPECT_EQ(c.query_int64("SELECT count(*) FROM sqlite_master"), 1);
  }
  // A newer client schema: refused, nothing changed.
  const std::string cdb = (dir_ / "client.db").string();
  sqlite::connection c(cdb);
  seed_client(c);
  c.exec(
      "UPDATE exactly_schema_version SET version = version + 1 WHERE component = 'exactly.client'");
  r = admin({"client", "--sqlite", cdb, "error", "requeue", "--all"});
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("this build knows version 1"), std::string::npos) << r.err;
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_error_queue"), 2);
}

TEST(admin_cli_postgres, client_lists_and_requeues_on_postgres) {
  const std::string conninfo = test::test_cluster().fresh_schema();
  pg::connection c(pg::options{conninfo});
  seed_client(c);
  auto r = admin({"client", "--postgres", conninfo, "errors", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["errors"].size(), 2u);
  r = admin({"client", "--postgres", conninfo, "error", "requeue", "--all"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "requeued 1\nrequeued 2\n");
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_error_queue"), 0);
  EXPECT_EQ(count_on(c, "SELECT count(*) FROM exactly_queue"), 3);
}

}  // namespace
}  // namespace exactly::server
