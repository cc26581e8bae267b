// One configuration syntax for every program: flags, EXACTLY_* environment variables and a config
// file (TOML or JSON), precedence flag > environment > file > default, units, errors, and the
// binaries' --print-config.

#include <child_process.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>
#include <layered_config.hpp>
#include <server_flags.hpp>
#include <units.hpp>

#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace exactly::test {
namespace {

using namespace std::chrono_literals;
using cli_config::layered_config;
using cli_config::source;

// An environment the test writes.
cli_config::env_lookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end())
      return std::nullopt;
    return it->second;
  };
}

// A server's options parsed in-process, as echo-server and payment-service register them.
struct parsed_server {
  CLI::App app{"test"};
  layered_config layers{app};
  server::server_options so;
  server::connector_options co;
  std::string listen = "127.0.0.1:0";
  std::ostringstream out, err;
  int status = -1;

  parsed_server() {
    app.add_option("--listen", listen, "HOST:PORT");
    samples::keys::add_server_options(app, so, co);
  }
  int parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), "test-server");
    status = layers.parse(args, out, err, env_of(std::move(env)));
    return status;
  }
};

class configuration : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) const {
    const auto p = dir_.path() / name;
    std::ofstream(p) << text;
    return p.string();
  }
  temp_dir dir_;
};

TEST(configuration_names, derive_the_environment_variable_from_the_flag) {
  EXPECT_EQ(cli_config::env_name("--max-body-bytes"), "EXACTLY_MAX_BODY_BYTES");
  EXPECT_EQ(cli_config::env_name("tls-client-ca-file"), "EXACTLY_TLS_CLIENT_CA_FILE");
  EXPECT_EQ(cli_config::env_name("payment-api-key"), "EXACTLY_PAYMENT_API_KEY");
}

TEST(configuration_units, durations_and_sizes) {
  EXPECT_EQ(cli_config::parse_duration("500ms"), 500ms);
  EXPECT_EQ(cli_config::parse_duration("15s"), 15s);
  EXPECT_EQ(cli_config::parse_duration("2m"), 2min);
  EXPECT_EQ(cli_config::parse_duration("24h"), 24h);
  EXPECT_EQ(cli_config::parse_duration("7d"), 168h);
  EXPECT_EQ(cli_config::parse_duration("0"), 0ms);
  for (const char* bad : {"", "15", "s", "-1s", "1.5s", "15 s", "15sec", "1y", "99999999999999d",
                          "36501d", "3153600000001ms"})
    EXPECT_THROW(cli_config::parse_duration(bad), std::invalid_argument) << bad;
  EXPECT_EQ(cli_config::parse_duration("36500d"), cli_config::max_duration);  // 100 years
  EXPECT_EQ(cli_config::format_duration(15000ms), "15s");
  EXPECT_EQ(cli_config::format_duration(1500ms), "1500ms");
  EXPECT_EQ(cli_config::format_duration(24h), "1d");
  EXPECT_EQ(cli_config::parse_size("1048576"), 1048576u);
  EXPECT_EQ(cli_config::parse_size("512B"), 512u);
  EXPECT_EQ(cli_config::parse_size("64KiB"), 65536u);
  EXPECT_EQ(cli_config::parse_size("1MiB"), 1048576u);
  EXPECT_EQ(cli_config::parse_size("2GiB"), 2147483648u);
  for (const char* bad : {"", "1MB", "1 MiB", "1kib", "-1", "MiB", "1.5MiB", "9223372036854775808",
                          "18446744073709551615"})
    EXPECT_THROW(cli_config::parse_size(bad), std::invalid_argument) << bad;
  EXPECT_EQ(cli_config::parse_size("9223372036854775807"), 9223372036854775807u);
  EXPECT_EQ(cli_config::format_size(1 << 20), "1MiB");
  EXPECT_EQ(cli_config::format_size(1000), "1000");
}

TEST_F(configuration, flag_beats_environment_beats_file_beats_default) {
  parsed_server p;
  const std::string f = file("server.toml",
                             "read-timeout = \"20s\"\n"
                             "idle-timeout = \"3m\"\n"
                             "write-timeout = \"7s\"\n"
                             "max-body-bytes = \"64KiB\"\n");
  ASSERT_EQ(p.parse({"--config", f, "--write-timeout", "9s"},
                    {{"EXACTLY_IDLE_TIMEOUT", "90s"}, {"EXACTLY_WRITE_TIMEOUT", "8s"}}),
            -1)
      << p.err.str();
  EXPECT_EQ(p.so.read_timeout, 20s);    // file
  EXPECT_EQ(p.so.idle_timeout, 90s);    // environment over file
  EXPECT_EQ(p.so.write_timeout, 9s);    // flag over environment and file
  EXPECT_EQ(p.so.shutdown_grace, 10s);  // default
  EXPECT_EQ(p.so.max_body_bytes, 65536u);
  EXPECT_EQ(p.layers.source_of("read-timeout"), source::file);
  EXPECT_EQ(p.layers.source_of("idle-timeout"), source::environment);
  EXPECT_EQ(p.layers.source_of("write-timeout"), source::command_line);
  EXPECT_EQ(p.layers.source_of("shutdown-grace"), source::default_value);
  // The file's location may come from the environment too.
  parsed_server q;
  ASSERT_EQ(q.parse({}, {{"EXACTLY_CONFIG", f}}), -1) << q.err.str();
  EXPECT_EQ(q.so.read_timeout, 20s);
}

TEST_F(configuration, every_server_and_connector_setting_is_reachable) {
  const std::string sha(64, 'a');
  parsed_server p;
  const std::string f = file("all.toml",
                             "tls-certificate-chain-file = \"/etc/exactly/chain.pem\"\n"
                             "tls-private-key-file = \"/etc/exactly/key.pem\"\n"
                             "tls-client-ca-file = \"/etc/exactly/ca.pem\"\n"
                             "tls-client-certificate = [\"billing:" +
                                 sha + "\", \"shop:" + sha +
                                 "\"]\n"
                                 "tls-handshake-timeout = \"3s\"\n"
                                 "max-body-bytes = \"2MiB\"\n"
                                 "max-header-bytes = \"8KiB\"\n"
                                 "read-timeout = \"1m\"\n"
                                 "write-timeout = \"2m\"\n"
                                 "idle-timeout = \"3m\"\n"
                                 "max-connections = 100\n"
                                 "max-tls-handshakes = 7\n"
                                 "shutdown-grace = \"0\"\n"
                                 "max-staged-per-principal = 50\n"
                                 "max-staged-bytes-per-principal = \"1MiB\"\n"
                                 "staged-ttl = \"2h\"\n"
                                 "response-retention = \"3d\"\n"
                                 "acceptance-window = \"30m\"\n"
                                 "max-future-skew = \"1m\"\n"
                                 "sweep-interval = \"5m\"\n"
                                 "dispatch-interval = \"100ms\"\n"
                                 "outbox-max-attempts = 4\n"
                                 "group-commit = false\n"
                                 "flush-every-commit = true\n"
                                 "metrics-need-key = true\n"
                                 "metrics-max-age = \"0\"\n");
  ASSERT_EQ(p.parse({"--config", f}), -1) << p.err.str();
  const auto& so = p.so;
  const auto& co = p.co;
  EXPECT_EQ(so.tls.certificate_chain_file, "/etc/exactly/chain.pem");
  EXPECT_EQ(so.tls.private_key_file, "/etc/exactly/key.pem");
  EXPECT_EQ(so.tls.client_ca_file, "/etc/exactly/ca.pem");
  ASSERT_EQ(so.tls.client_certificates.size(), 2u);
  EXPECT_EQ(so.tls.client_certificates[1].principal, "shop");
  EXPECT_EQ(so.tls.client_certificates[1].sha256_hex, sha);
  EXPECT_EQ(so.tls.handshake_timeout, 3s);
  EXPECT_EQ(so.max_body_bytes, 2u << 20);
  EXPECT_EQ(so.max_header_bytes, 8u << 10);
  EXPECT_EQ(so.read_timeout, 1min);
  EXPECT_EQ(so.write_timeout, 2min);
  EXPECT_EQ(so.idle_timeout, 3min);
  EXPECT_EQ(so.max_connections, 100u);
  EXPECT_EQ(so.max_tls_handshakes, 7u);
  EXPECT_EQ(so.shutdown_grace, 0ms);
  EXPECT_EQ(co.max_staged_per_principal, 50);
  EXPECT_EQ(co.max_staged_bytes_per_principal, 1 << 20);
  EXPECT_EQ(co.times.staged_ttl_ms, 2 * 3600 * 1000);
  EXPECT_EQ(co.times.response_retention_ms, 3LL * 24 * 3600 * 1000);
  EXPECT_EQ(co.times.acceptance_window_ms, 30 * 60 * 1000);
  EXPECT_EQ(co.times.max_future_skew_ms, 60 * 1000);
  EXPECT_EQ(so.sweep_interval, 5min);
  EXPECT_EQ(so.dispatch_interval, 100ms);
  EXPECT_EQ(co.outbox_max_attempts, 4);
  EXPECT_FALSE(so.group_commit);
  EXPECT_TRUE(so.flush_every_commit);
  EXPECT_TRUE(so.metrics_need_key);
  EXPECT_EQ(so.metrics_max_age, 0ms);
}

TEST_F(configuration, a_json_file_and_list_values_from_the_environment) {
  parsed_server p;
  const std::string sha(64, 'b');
  const std::string f = file("server.json", R"({"max-body-bytes": 4096, "group-commit": false,
      "read-timeout": "2s", "metrics-need-key": true})");
  ASSERT_EQ(p.parse({"--config", f}, {{"EXACTLY_TLS_CLIENT_CERTIFICATE", "a:" + sha + " b:" + sha},
                                      {"EXACTLY_FLUSH_EVERY_COMMIT", "true"}}),
            -1)
      << p.err.str();
  EXPECT_TRUE(p.so.flush_every_commit);
  EXPECT_EQ(p.so.max_body_bytes, 4096u);
  EXPECT_FALSE(p.so.group_commit);
  EXPECT_EQ(p.so.read_timeout, 2s);
  EXPECT_TRUE(p.so.metrics_need_key);
  ASSERT_EQ(p.so.tls.client_certificates.size(), 2u);
  EXPECT_EQ(p.so.tls.client_certificates[1].principal, "b");
}

TEST_F(configuration, flush_every_commit_is_off_unless_asked) {
  parsed_server off;
  ASSERT_EQ(off.parse({}), -1) << off.err.str();
  EXPECT_FALSE(off.so.flush_every_commit);  // PUTs and DELETEs unflushed by default
  parsed_server on;
  ASSERT_EQ(on.parse({"--flush-every-commit"}, {{"EXACTLY_FLUSH_EVERY_COMMIT", "false"}}), -1)
      << on.err.str();
  EXPECT_TRUE(on.so.flush_every_commit);  // the flag beats the environment
  EXPECT_EQ(on.layers.source_of("flush-every-commit"), source::command_line);
}

TEST_F(configuration, sqlite_wal_pages_sets_the_checkpoint_thresholds_and_the_wal_size) {
  parsed_server defaults;
  ASSERT_EQ(defaults.parse({}), -1) << defaults.err.str();
  const sqlite::options library;
  EXPECT_EQ(defaults.co.db.checkpoint_pages, library.checkpoint_pages);
  EXPECT_EQ(defaults.co.db.finish_checkpoint_pages, library.finish_checkpoint_pages);
  EXPECT_EQ(defaults.co.db.wal_size_limit_bytes, library.wal_size_limit_bytes);
  parsed_server set;
  const std::string f = file("server.toml", "sqlite-wal-pages = 10000\n");
  ASSERT_EQ(set.parse({"--config", f}), -1) << set.err.str();
  EXPECT_EQ(set.co.db.checkpoint_pages, 10000);
  EXPECT_EQ(set.co.db.finish_checkpoint_pages, 40000);
  // As the defaults scaled: 16 MiB a 4000 pages, above a WAL of 10000 (32 + 10000 * 4120).
  EXPECT_EQ(set.co.db.wal_size_limit_bytes, 41943040);
  EXPECT_NO_THROW(sqlite::connection((dir_.path() / "w.db").string(), set.co.db));
  parsed_server same;
  ASSERT_EQ(same.parse({}, {{"EXACTLY_SQLITE_WAL_PAGES", "4000"}}), -1) << same.err.str();
  EXPECT_EQ(same.co.db.wal_size_limit_bytes, library.wal_size_limit_bytes);  // the default's
  for (const char* bad : {"0", "99", "-5", "2000000", "many"}) {
    parsed_server refused;
    EXPECT_NE(refused.parse({"--sqlite-wal-pages", bad}), -1) << bad;
  }
  parsed_server from_env;
  EXPECT_NE(from_env.parse({}, {{"EXACTLY_SQLITE_WAL_PAGES", "99"}}), -1);
  EXPECT_NE(from_env.err.str().find("EXACTLY_SQLITE_WAL_PAGES"), std::string::npos)
      << from_env.err.str();
}

TEST_F(configuration, a_subcommand_reads_its_own_section) {
  const std::string f = file("tool.toml",
                             "db = \"from-file.db\"\n"
                             "[list]\n"
                             "state = \"staged\"\n"
                             "limit = 5\n"
                             "[drop]\n"
                             "confirm = true\n"
                             "[error.show]\n"
                             "limit = 9\n");
  auto make = [](CLI::App& app, std::string& db, std::string& state, int& limit, bool& confirm) {
    app.add_option("--db", db, "database");
    CLI::App* list = app.add_subcommand("list", "list");
    list->add_option("--state", state, "state");
    list->add_option("--limit", limit, "rows");
    CLI::App* drop = app.add_subcommand("drop", "drop");
    drop->add_flag("--confirm", confirm, "yes");
    CLI::App* error = app.add_subcommand("error", "errors");
    error->add_subcommand("show", "one")->add_option("--limit", limit, "rows");
  };
  CLI::App app{"tool"};
  layered_config layers(app);
  std::string db, state;
  int limit = 0;
  bool confirm = false;
  make(app, db, state, limit, confirm);
  std::ostringstream out, err;
  ASSERT_EQ(layers.parse({"tool", "--config", f, "list", "--limit", "7"}, out, err,
                         env_of({{"EXACTLY_STATE", "executed"}})),
            -1)
      << err.str();
  EXPECT_EQ(db, "from-file.db");
  EXPECT_EQ(state, "executed");  // environment over the [list] section
  EXPECT_EQ(limit, 7);           // flag over the file
  EXPECT_FALSE(confirm);         // [drop] is not read when drop does not run
  EXPECT_EQ(layers.effective()["options"]["list.state"]["source"], "environment");
  // A confirmation flag marked by name is refused from the environment and the file in every
  // subcommand.
  {
    CLI::App guarded{"tool"};
    layered_config layers4(guarded);
    layers4.command_line_only("confirm");
    make(guarded, db, state, limit, confirm);
    ASSERT_EQ(layers4.parse({"tool", "drop"}, out, err, env_of({{"EXACTLY_CONFIRM", "true"}})), -1)
        << err.str();
    EXPECT_FALSE(confirm);
    std::ostringstream err4;
    EXPECT_EQ(layers4.parse({"tool", "--config", f, "drop"}, out, err4, env_of({})), 2);
    EXPECT_NE(err4.str().find("key drop.confirm may only be given on the command line"),
              std::string::npos)
        << err4.str();
  }
  // A nested subcommand reads its nested section.
  {
    CLI::App nested{"tool"};
    layered_config layers3(nested);
    make(nested, db, state, limit, confirm);
    ASSERT_EQ(layers3.parse({"tool", "--config", f, "error", "show"}, out, err, env_of({})), -1)
        << err.str();
    EXPECT_EQ(limit, 9);
    EXPECT_EQ(layers3.effective()["options"]["error.show.limit"]["source"], "file");
  }
  // A key no subcommand has is still an error.
  CLI::App app2{"tool"};
  layered_config layers2(app2);
  make(app2, db, state, limit, confirm);
  const std::string bad = file("bad-tool.toml", "[list]\nstat = \"x\"\n");
  EXPECT_EQ(layers2.parse({"tool", "--config", bad, "list"}, out, err, env_of({})), 2);
  EXPECT_NE(err.str().find("unknown key list.stat"), std::string::npos) << err.str();
}

TEST_F(configuration, bad_values_name_the_option_and_where_the_value_came_from) {
  {
    parsed_server p;
    EXPECT_EQ(p.parse({}, {{"EXACTLY_READ_TIMEOUT", "15"}}), 2);
    EXPECT_NE(p.err.str().find("--read-timeout: bad duration '15'"), std::string::npos)
        << p.err.str();
    EXPECT_NE(p.err.str().find("environment variable EXACTLY_READ_TIMEOUT"), std::string::npos)
        << p.err.str();
  }
  {
    parsed_server p;
    const std::string f = file("bad.toml", "max-body-bytes = \"1MB\"\n");
    EXPECT_EQ(p.parse({"--config", f}), 2);
    EXPECT_NE(p.err.str().find("bad size '1MB'"), std::string::npos) << p.err.str();
    EXPECT_NE(p.err.str().find("key max-body-bytes of " + f), std::string::npos) << p.err.str();
  }
  {
    parsed_server p;
    EXPECT_EQ(p.parse({"--max-body-bytes", "0"}), 2);
    EXPECT_NE(p.err.str().find("at least 1 byte"), std::string::npos) << p.err.str();
  }
  {
    parsed_server p;
    EXPECT_EQ(p.parse({"--idle-timeout", "0"}), 2);
    EXPECT_NE(p.err.str().find("--idle-timeout: must be more than 0"), std::string::npos)
        << p.err.str();
  }
  {
    parsed_server p;
    EXPECT_EQ(p.parse({"--max-connections", "0"}), 2) << p.err.str();
  }
  {
    parsed_server p;
    EXPECT_EQ(p.parse({"--tls-client-certificate", "billing:abc"}), 2);
    EXPECT_NE(p.err.str().find("64 hex digits"), std::string::npos) << p.err.str();
  }
  {
    parsed_server p;
    const std::string f = file("unknown.toml", "max-body = 10\n");
    EXPECT_EQ(p.parse({"--config", f}), 2);
    EXPECT_NE(p.err.str().find("unknown key max-body"), std::string::npos) << p.err.str();
  }
  {
    parsed_server p;
    EXPECT_EQ(p.parse({"--config", (dir_.path() / "missing.toml").string()}), 2);
    EXPECT_NE(p.err.str().find("cannot read config file"), std::string::npos) << p.err.str();
  }
  {
    parsed_server p;
    const std::string f = file("broken.json", "{\"max-body-bytes\": ");
    EXPECT_EQ(p.parse({"--config", f}), 2);
    EXPECT_NE(p.err.str().find("expected one JSON object"), std::string::npos) << p.err.str();
  }
}

// --- The binaries -------------------------------------------------------------------------

using run_result = captured_run;

// Runs `program` with only `env` in its environment (stdout captured, stderr appended).
run_result run(const std::string& program, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {}) {
  std::string line = "env -i";
  for (const std::string& e : env)
    line += " " + shell_quoted(e);
  line += " " + shell_quoted(program);
  for (const std::string& a : args)
    line += " " + shell_quoted(a);
  return run_captured(line);
}

nlohmann::json printed(const run_result& r) {
  EXPECT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out;
  return j.is_object() ? j["options"] : nlohmann::json::object();
}

TEST_F(configuration, echo_server_prints_its_effective_configuration) {
  const std::string f = file("echo.toml",
                             "read-timeout = \"20s\"\n"
                             "idle-timeout = \"3m\"\n"
                             "write-timeout = \"7s\"\n"
                             "open = true\n");
  const auto o =
      printed(run(EXACTLY_ECHO_SERVER, {"--config", f, "--write-timeout", "9s", "--print-config"},
                  {"EXACTLY_IDLE_TIMEOUT=90s", "EXACTLY_WRITE_TIMEOUT=8s"}));
  EXPECT_EQ(o["read-timeout"]["value"], "20s");
  EXPECT_EQ(o["read-timeout"]["source"], "file");
  EXPECT_EQ(o["read-timeout"]["env"], "EXACTLY_READ_TIMEOUT");
  EXPECT_EQ(o["idle-timeout"]["value"], "90s");
  EXPECT_EQ(o["idle-timeout"]["source"], "environment");
  EXPECT_EQ(o["write-timeout"]["value"], "9s");
  EXPECT_EQ(o["write-timeout"]["source"], "command line");
  EXPECT_EQ(o["shutdown-grace"]["value"], "10s");
  EXPECT_EQ(o["shutdown-grace"]["source"], "default");
  EXPECT_EQ(o["open"]["source"], "file");
  EXPECT_EQ(o["staged-ttl"]["value"], "1d");
  EXPECT_EQ(o["max-body-bytes"]["value"], "1MiB");
}

TEST_F(configuration, payment_service_and_echo_server_spell_their_options_the_same) {
  const auto echo = printed(run(EXACTLY_ECHO_SERVER, {"--print-config"}));
  const auto payment = printed(run(EXACTLY_PAYMENT_SERVICE, {"--print-config"}));
  const std::vector<std::string> shared = {"listen",
                                           "db",
                                           "postgres",
                                           "api-keys-file",
                                           "api-key",
                                           "open",
                                           "test-control-key-file",
                                           "tls-certificate-chain-file",
                                           "tls-client-certificate",
                                           "max-body-bytes",
                                           "read-timeout",
                                           "max-connections",
                                           "staged-ttl",
                                           "response-retention",
                                           "acceptance-window",
                                           "max-future-skew",
                                           "sweep-interval",
                                           "dispatch-interval",
                                           "shutdown-grace",
                                           "group-commit",
                                           "flush-every-commit",
                                           "sqlite-wal-pages",
                                           "background-sync",
                                           "metrics-need-key",
                                           "metrics-max-age"};
  for (const std::string& k : shared) {
    EXPECT_TRUE(echo.contains(k)) << k;
    EXPECT_TRUE(payment.contains(k)) << k;
  }
  for (const auto& [k, v] : payment.items()) {
    if (k != "initial-balance-cents") {
      EXPECT_TRUE(echo.contains(k)) << "payment-service has --" << k << ", echo-server not";
    }
  }
}

TEST_F(configuration, keys_come_from_a_file_or_the_environment_and_are_never_printed) {
  const std::string key = "b1ll1ng-k3y-0123456789abcdef";
  const std::string keys = file("keys", "billing:" + key + "\n");
  std::filesystem::permissions(
      keys, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string f = file("payment.toml", "api-keys-file = \"" + keys + "\"\n");
  const auto r = run(EXACTLY_PAYMENT_SERVICE,
                     {"--config", f, "--api-key", "x:" + key + "x", "--print-config"});
  EXPECT_EQ(r.out.find(key), std::string::npos) << r.out;  // --api-key is secret
  const auto o = printed(r);
  EXPECT_EQ(o["api-keys-file"]["value"], keys);
  EXPECT_EQ(o["api-key"]["value"], "(secret)");
  EXPECT_FALSE(o["api-key"].contains("env"));  // EXACTLY_API_KEYS is its variable
  // orders-billing's key for the payment service: EXACTLY_PAYMENT_API_KEY, shown as a secret.
  const auto orders = run(EXACTLY_ORDERS_BILLING, {"--print-config"},
                          {"EXACTLY_PAYMENT_API_KEY=" + key, "EXACTLY_WORKERS=3"});
  EXPECT_EQ(orders.out.find(key), std::string::npos) << orders.out;
  const auto oo = printed(orders);
  EXPECT_EQ(oo["payment-api-key"]["value"], "(secret)");
  EXPECT_EQ(oo["payment-api-key"]["source"], "environment");
  EXPECT_EQ(oo["workers"]["value"], "3");
  // A connection string may hold a password: --postgres is secret in every program.
  for (const char* program :
       {EXACTLY_ECHO_SERVER, EXACTLY_PAYMENT_SERVICE, EXACTLY_ORDERS_BILLING}) {
    const auto pg = run(program, {"--print-config"}, {"EXACTLY_POSTGRES=host=db password=hunter2"});
    EXPECT_EQ(pg.out.find("hunter2"), std::string::npos) << program << ": " << pg.out;
    EXPECT_EQ(printed(pg)["postgres"]["value"], "(secret)") << program;
  }
  // A key in a config file is refused where it must be typed: the test-control switch.
  const std::string tc = file("tc.toml", "test-control = true\n");
  const auto refused = run(EXACTLY_ECHO_SERVER, {"--config", tc, "--print-config"});
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_NE(refused.out.find("key test-control may only be given on the command line"),
            std::string::npos)
      << refused.out;
}

TEST_F(configuration, the_tools_take_the_same_syntax) {
  const auto proxy =
      printed(run(EXACTLY_FAULT_PROXY, {"--print-config"},
                  {"EXACTLY_UPSTREAM=127.0.0.1:1 127.0.0.1:2", "EXACTLY_DROP_RESPONSE=0.25"}));
  EXPECT_EQ(proxy["upstream"]["value"], nlohmann::json({"127.0.0.1:1", "127.0.0.1:2"}));
  EXPECT_EQ(proxy["drop-response"]["value"], "0.25");
  const std::string f = file("conformance.toml",
                             "base-url = \"http://127.0.0.1:1\"\n"
                             "key = \"alice-key-0123456789\"\n");
  const auto c = run(EXACTLY_CONFORMANCE, {"--config", f, "--print-config"},
                     {"EXACTLY_TEST_CONTROL_KEY=control-key-0123456789"});
  EXPECT_EQ(c.out.find("alice-key-0123456789"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("control-key-0123456789"), std::string::npos) << c.out;
  const auto co = printed(c);
  EXPECT_EQ(co["base-url"]["value"], "http://127.0.0.1:1");
  EXPECT_EQ(co["key"]["value"], "(secret)");
  EXPECT_EQ(co["test-control-key"]["source"], "environment");
  // A bad value from the environment names the variable.
  const auto bad =
      run(EXACTLY_FAULT_PROXY, {"--upstream", "127.0.0.1:1"}, {"EXACTLY_DELAY_MS=soon"});
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("EXACTLY_DELAY_MS"), std::string::npos) << bad.out;
}

TEST_F(configuration, a_server_started_from_a_config_file_applies_it) {
  // No flag but --config: open mode and a 100-byte body limit from the file.
  const std::string f = file("echo.toml",
                             "listen = \"127.0.0.1:0\"\nopen = true\n"
                             "max-body-bytes = 100\ndb = \"" +
                                 (dir_.path() / "echo.db").string() + "\"\n");
  child_process server({"/usr/bin/env", "-i", EXACTLY_ECHO_SERVER, "--config", f}, "", true);
  const std::string& line = server.first_line();
  const auto port = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
  http_client c(port);
  const std::string target = "/vectors/echo/" + request_id::mint().to_string();
  const std::vector<std::pair<std::string, std::string>> h = {{"Content-Type", "application/json"}};
  EXPECT_EQ(c.request("PUT", target, R"({"status":200})", h).status, 201u);  // open: no key needed
  const std::string big = R"({"status":200,"pad":")" + std::string(200, 'x') + "\"}";
  EXPECT_EQ(c.request("PUT", "/vectors/echo/" + request_id::mint().to_string(), big, h).status,
            413u);
  EXPECT_EQ(server.terminate(), 0);
}

TEST_F(configuration, the_operator_page_and_the_access_log_are_sample_flags) {
  const std::string db = (dir_.path() / "echo.db").string();
  const std::vector<std::string> base = {"--open", "--listen", "127.0.0.1:0", "--db", db};
  auto args = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return more;
  };
  // A page without a key, a key file without the page, a short key: refused before serving.
  run_result r = run(EXACTLY_ECHO_SERVER, args({"--operator-page"}));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--operator-page needs a key"), std::string::npos) << r.out;
  const std::string key_file = file("page-key", "operator-page-key-0123456789\n");
  r = run(EXACTLY_ECHO_SERVER, args({"--operator-page-key-file", key_file}));
  EXPECT_EQ(r.status, 2) << r.out;
  r = run(EXACTLY_ECHO_SERVER, args({"--operator-page"}), {"EXACTLY_OPERATOR_PAGE_KEY=short"});
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("16"), std::string::npos) << r.out;

  // The page for its key only, and one access log line per request.
  const std::string log = (dir_.path() / "access.log").string();
  child_process server({"/usr/bin/env", "-i", EXACTLY_ECHO_SERVER, "--open", "--listen",
                        "127.0.0.1:0", "--db", db, "--operator-page", "--operator-page-key-file",
                        key_file, "--access-log", "--access-log-file", log},
                       "", true);
  const std::string& line = server.first_line();
  const auto port = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
  http_client c(port);
  EXPECT_EQ(c.request("GET", "/_exactly/operator", "", {}).status, 401u);
  const auto page = c.request("GET", "/_exactly/operator", "",
                              {{"Authorization", "Bearer operator-page-key-0123456789"}});
  EXPECT_EQ(page.status, 200u);
  EXPECT_NE(page.body.find("operator page"), std::string::npos);
  EXPECT_EQ(server.terminate(), 0);
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(" GET /_exactly/operator 401 "), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" GET /_exactly/operator 200 "), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace exactly::test
