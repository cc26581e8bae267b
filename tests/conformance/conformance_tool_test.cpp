// exactly-conformance run as a user runs it, against processes on loopback: the sample servers
// pass; each deliberately broken server fails, on the case that checks the rule it breaks.

#include <child_process.hpp>
#include <echo_server.hpp>

#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace exactly::test {
namespace {

const std::string alice_key = "alice-conformance-0123456789";
const std::string bob_key = "bob-conformance-0123456789ab";
const std::string control_key = "test-control-0123456789abcdef";

struct tool_run : captured_run {
  // The table row of `name` ("name | result | detail"), or "".
  std::string row(const std::string& name) const {
    for (std::size_t at = 0; (at = out.find(name + " ", at)) != std::string::npos; ++at) {
      if (at == 0 || out[at - 1] == '\n')
        return out.substr(at, out.find('\n', at) - at);
    }
    return "";
  }
};

// Runs `program` with `args` (stdout and stderr captured), without the sample servers' key
// variables unless `env` sets them ("NAME=VALUE" entries).
tool_run run_program(const std::string& program, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}) {
  std::string line = "env -u EXACTLY_API_KEYS -u EXACTLY_TEST_CONTROL_KEY";
  for (const std::string& e : env)
    line += " " + shell_quoted(e);
  line += " " + shell_quoted(program);
  for (const std::string& a : args)
    line += " " + shell_quoted(a);
  return {run_captured(line)};
}

tool_run run_tool(const std::vector<std::string>& args) {
  return run_program(EXACTLY_CONFORMANCE, args);
}

class conformance_tool : public ::testing::Test {
 protected:
  conformance_tool() {
    std::ofstream(keys_file()) << "alice:" << alice_key << "\nbob:" << bob_key << '\n';
    std::ofstream(control_file()) << control_key << '\n';
  }
  std::string keys_file() const { return (dir_.path() / "keys").string(); }
  std::string control_file() const { return (dir_.path() / "control").string(); }
  std::string db() const { return (dir_.path() / "server.db").string(); }

  // Starts a server program that prints "listening on HOST:PORT"; returns its base URL.
  std::string start(const std::vector<std::string>& argv, const std::string& env = "") {
    std::string line = "exec env -u EXACTLY_API_KEYS -u EXACTLY_TEST_CONTROL_KEY";
    if (!env.empty())
      line += " " + shell_quoted(env);
    for (const std::string& a : argv)
      line += " " + shell_quoted(a);
    line += " 2>" + shell_quoted((dir_.path() / "stderr").string());
    server_ =
        std::make_unique<child_process>(std::vector<std::string>{"/bin/sh", "-c", line}, "", true);
    const std::string& first = server_->first_line();
    return "http://127.0.0.1:" + first.substr(first.rfind(':') + 1);
  }
  std::vector<std::string> keys(const std::string& url) const {
    return {"--base-url", url, "--key", alice_key, "--second-key", bob_key};
  }
  std::string broken(const std::string& mode) {
    return start({EXACTLY_BROKEN_SERVER, "--break", mode, "--key", alice_key, "--second-key",
                  bob_key, "--db", db()});
  }
  // Runs the tool against broken-server --break `mode`, writing results_json().
  tool_run run_broken(const std::string& mode) {
    auto args = keys(broken(mode));
    args.insert(args.end(), {"--json", results_json()});
    return run_tool(args);
  }
  std::string results_json() const { return (dir_.path() / "results.json").string(); }
  // The names of the cases results_json() reports FAIL (each with its failures listed).
  std::set<std::string> failing_cases() const {
    std::ifstream in(results_json());
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    std::set<std::string> out;
    if (doc.is_discarded() || !doc.contains("cases")) {
      out.insert("(no JSON results)");
      return out;
    }
    for (const auto& c : doc.at("cases")) {
      if (c.at("result") == "FAIL")
        out.insert(c.at("name").get<std::string>() +
                   (c.at("failures").empty() ? " (FAIL without failures)" : ""));
    }
    return out;
  }
  void TearDown() override {
    if (server_) {
      EXPECT_EQ(server_->terminate(), 0);
    }
  }

  temp_dir dir_;
  std::unique_ptr<child_process> server_;
};

TEST_F(conformance_tool, echo_server_with_test_control_passes_every_case) {
  const std::string url = start(
      {EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(), "--api-keys-file", keys_file(),
       "--test-control", "--test-control-key-file", control_file(), "--max-body-bytes", "1024",
       "--max-staged-per-principal", "3", "--max-staged-bytes-per-principal", "2048"});
  auto args = keys(url);
  args.insert(args.end(), {"--test-control-key-file", control_file(), "--spec-limits",
                           "--max-body-bytes", "1024"});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" passed, 0 pass* (weaker check, see detail), 0 failed, 0 skipped"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.row("retention/tombstones-stay-one-window").find("| pass   |"), std::string::npos);
  // The echo server counts executions: the concurrent POSTs are checked in full.
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| pass   |"), std::string::npos) << r.out;
}

TEST_F(conformance_tool, without_test_control_the_clock_cases_are_skipped_with_the_reason) {
  const std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                                 "--api-keys-file", keys_file()});
  const tool_run r = run_tool(keys(url));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" 0 failed, "), std::string::npos) << r.out;
  const std::string row = r.row("retention/tombstones-stay-one-window");
  EXPECT_NE(row.find("| skip"), std::string::npos) << row;
  EXPECT_NE(row.find("needs the test-control interface"), std::string::npos) << row;
  // A case that counts rows cannot pass without the controls that count them.
  const std::string counted = r.row("put/put-unknown-stages");
  EXPECT_NE(counted.find("| skip"), std::string::npos) << counted;
  EXPECT_NE(counted.find("counts rows: needs the test-control interface"), std::string::npos)
      << counted;
  // Executions counted from the runner's own answers: pass*, never a plain pass.
  const std::string executions = r.row("post/post-deleted-before-execution-never-runs");
  EXPECT_NE(executions.find("| pass*"), std::string::npos) << executions;
  EXPECT_NE(executions.find("executions NOT counted by the server"), std::string::npos);
  const std::string concurrent = r.row("black-box/concurrent-posts");
  EXPECT_NE(concurrent.find("| pass*"), std::string::npos) << concurrent;
  EXPECT_NE(concurrent.find("executions NOT counted by the server"), std::string::npos);
  EXPECT_EQ(r.out.find(" 0 pass* "), std::string::npos) << r.out;
  EXPECT_NE(r.row("limits/staged-limit-per-principal").find("--spec-limits"), std::string::npos);
}

TEST_F(conformance_tool, test_control_is_off_by_default) {
  const std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                                 "--api-keys-file", keys_file()});
  // alice's API key authenticates, so /_exactly/test/clock is then an ordinary unknown route: 404
  // (were the interface on, another key than its own would get 401).
  auto args = keys(url);
  args.insert(args.end(), {"--test-control-key", alice_key});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("does not answer: GET /_exactly/test/clock answered 404"), std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, the_key_in_the_environment_alone_does_not_turn_test_control_on) {
  const std::string env = "EXACTLY_TEST_CONTROL_KEY=" + control_key;
  std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                           "--api-keys-file", keys_file()},
                          env);
  auto args = keys(url);
  args.insert(args.end(), {"--test-control-key", control_key, "--only", "black-box/lifecycle"});
  tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("does not answer: GET /_exactly/test/clock answered 401"), std::string::npos)
      << r.out;
  EXPECT_EQ(server_->terminate(), 0);
  server_.reset();
  // With --test-control the same key from the environment turns it on.
  url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(), "--api-keys-file",
               keys_file(), "--test-control"},
              env);
  args = keys(url);
  args.insert(args.end(), {"--test-control-key", control_key, "--only", "black-box/lifecycle"});
  r = run_tool(args);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.row("black-box/lifecycle").find("| pass   |"), std::string::npos) << r.out;
}

TEST_F(conformance_tool, the_sample_servers_refuse_a_test_control_key_without_the_flag_or_weak) {
  const std::vector<std::string> base = {"--listen", "127.0.0.1:0",     "--db",
                                         db(),       "--api-keys-file", keys_file()};
  auto with = [&base](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return more;
  };
  tool_run r = run_program(EXACTLY_ECHO_SERVER, with({"--test-control-key-file", control_file()}));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--test-control-key-file needs --test-control"), std::string::npos) << r.out;
  r = run_program(EXACTLY_ECHO_SERVER, with({"--test-control"}));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--test-control needs a key"), std::string::npos) << r.out;
  const std::string alice_as_control = (dir_.path() / "alice-control").string();
  std::ofstream(alice_as_control) << alice_key << '\n';
  r = run_program(EXACTLY_PAYMENT_SERVICE,
                  with({"--test-control", "--test-control-key-file", alice_as_control}));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("the test-control key must not be an API key"), std::string::npos) << r.out;
  r = run_program(EXACTLY_ECHO_SERVER, with({"--test-control"}),
                  {"EXACTLY_TEST_CONTROL_KEY=short-key"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("at least 16 characters"), std::string::npos) << r.out;
}

TEST_F(conformance_tool, test_control_refuses_another_key) {
  const std::string url =
      start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(), "--api-keys-file",
             keys_file(), "--test-control", "--test-control-key-file", control_file()});
  auto args = keys(url);
  args.insert(args.end(), {"--test-control-key", alice_key, "--only", "black-box/lifecycle"});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("does not answer: GET /_exactly/test/clock answered 401"), std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, payment_service_passes_with_its_own_bodies) {
  const std::string url =
      start({EXACTLY_PAYMENT_SERVICE, "--listen", "127.0.0.1:0", "--db", db(), "--api-keys-file",
             keys_file(), "--test-control", "--test-control-key-file", control_file()});
  auto args = keys(url);
  args.insert(args.end(),
              {"--test-control-key-file", control_file(), "--route", "/payment/authorize/{id}",
               "--body", R"({"customer_id":"conformance","amount_cents":1,"reference":"r-{n}"})",
               "--invalid-body", R"({"amount_cents":-1})"});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" 0 failed, "), std::string::npos) << r.out;
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| pass"), std::string::npos) << r.out;
  EXPECT_NE(r.row("post/failing-logic-is-500-and-stays-staged").find("| skip"), std::string::npos);
  // payment-service cannot count executions: they are counted from the answers, the verdict is
  // pass* (not pass), and the detail says so.
  const std::string once = r.row("post/post-staged-executes-once");
  EXPECT_NE(once.find("| pass*"), std::string::npos) << r.out;
  EXPECT_NE(once.find("executions NOT counted by the server"), std::string::npos) << r.out;
}

TEST_F(conformance_tool, a_server_that_restages_a_deleted_id_fails) {
  const tool_run r = run_broken("restage");
  EXPECT_EQ(r.status, 1) << r.out;
  // Exactly the cases that DELETE an id and then use it again.
  EXPECT_EQ(failing_cases(), (std::set<std::string>{
                                 "black-box/lifecycle",
                                 "black-box/pipelining",
                                 "black-box/state-deleted",
                                 "black-box/state-unknown",
                                 "get/get-after-delete-is-410-consumed",
                                 "ownership/another-principal-cannot-touch-a-tombstone",
                                 "post/post-after-delete-is-410-consumed",
                                 "post/post-deleted-before-execution-never-runs",
                                 "put/put-after-delete-is-410-consumed",
                             }))
      << r.out;
  EXPECT_NE(r.row("black-box/lifecycle").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PUT after DELETE (re-staging): status: want 410, got 201"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, a_server_that_executes_concurrent_posts_twice_fails) {
  const tool_run r = run_broken("double-execute");
  EXPECT_EQ(r.status, 1) << r.out;
  // The concurrent POSTs, and the cases that POST an executed id again.
  EXPECT_EQ(failing_cases(), (std::set<std::string>{
                                 "black-box/concurrent-posts",
                                 "black-box/lifecycle",
                                 "black-box/state-executed",
                                 "post/business-statuses-are-outcomes",
                             }))
      << r.out;
  EXPECT_NE(r.out.find("want exactly 1 answer \"executed\""), std::string::npos) << r.out;
}

TEST_F(conformance_tool, a_server_that_answers_404_where_410_is_due_fails) {
  const tool_run r = run_broken("gone-as-404");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(failing_cases(), (std::set<std::string>{
                                 "black-box/state-unknown-old",
                                 "get/get-unknown-old-id-is-410-too-old",
                             }))
      << r.out;
  EXPECT_NE(r.out.find("want 410, got 404"), std::string::npos) << r.out;
  // It also counts rows, which a server without test control cannot: skipped, not passed.
  EXPECT_NE(r.row("post/post-unknown-old-id-is-410-too-old-for-every-principal").find("| skip"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, a_server_whose_answers_are_not_the_echo_fails) {
  const tool_run r = run_broken("echo-body");
  EXPECT_EQ(r.status, 1) << r.out;
  // The same wrong body every time: the black-box cases see it only by the echo check.
  EXPECT_EQ(failing_cases(), (std::set<std::string>{
                                 "black-box/concurrent-posts",
                                 "black-box/lifecycle",
                                 "black-box/ownership",
                                 "black-box/pipelining",
                                 "black-box/state-executed",
                                 "black-box/state-staged",
                                 "lifecycle/independent-ids-do-not-interfere",
                                 "post/business-statuses-are-outcomes",
                             }))
      << r.out;
  EXPECT_NE(r.out.find("- POST: body: want \"{\"reply\":\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(the echo of the staged body), got \"{\"reply\":\"tampered\"}\""),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, a_problem_whose_status_is_not_the_http_status_fails) {
  const tool_run r = run_broken("problem-status");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(failing_cases(), (std::set<std::string>{
                                 "black-box/ownership",
                                 "black-box/state-unknown",
                                 "black-box/state-unknown-future",
                                 "get/get-unknown-is-404",
                                 "get/get-unknown-old-id-is-410-too-old",
                                 "ownership/another-principal-cannot-touch-a-tombstone",
                                 "ownership/another-principal-sees-404-on-every-verb",
                                 "post/post-unknown-is-404",
                             }))
      << r.out;
  EXPECT_NE(r.out.find("POST of a unknown id: the problem's status: want 404 (the HTTP status), "
                       "got 400"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, the_broken_server_passes_what_it_does_not_break) {
  // The broken servers are the real one but for their one rule: the lifecycle passes on one
  // that answers 404 for old ids, so the failures above are the rules', not the harness's.
  const tool_run r = run_tool(keys(broken("gone-as-404")));
  EXPECT_NE(r.row("black-box/lifecycle").find("| pass   |"), std::string::npos) << r.out;
  // It cannot count executions (no test control): pass*, not pass.
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| pass*  |"), std::string::npos) << r.out;
}

TEST_F(conformance_tool, no_case_run_is_not_a_pass) {
  const std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                                 "--api-keys-file", keys_file()});
  const std::filesystem::path empty = dir_.path() / "empty";
  std::filesystem::create_directory(empty);
  auto args = keys(url);
  args.insert(args.end(), {"--vectors", empty.string(), "--no-black-box"});
  tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("no vector files"), std::string::npos) << r.out;
  args = keys(url);
  args.insert(args.end(), {"--only", "no-such-case"});
  r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("no case passed (no case ran)"), std::string::npos) << r.out;
  // Only skips: nothing was checked.
  args = keys(url);
  args.insert(args.end(), {"--only", "retention/tombstones-stay-one-window"});
  r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("0 passed, 0 pass* (weaker check, see detail), 0 failed, 1 skipped"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, a_misspelt_or_malformed_vector_fails_its_case_and_the_rest_run) {
  const std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                                 "--api-keys-file", keys_file()});
  const std::filesystem::path vectors = dir_.path() / "vectors";
  std::filesystem::create_directory(vectors);
  const std::string put = R"({"method":"PUT","id":"a","body":"{\"status\":200,\"reply\":\"x\"}",)";
  std::ofstream(vectors / "typos.json")
      << R"({"cases":[)"
      << R"({"name":"fine","steps":[)" << put << R"("expect":{"status":201}}]},)"
      << R"({"name":"principle","steps":[)" << put
      << R"("principle":"bob","expect":{"status":201}}]},)"
      << R"({"name":"outcom","steps":[)" << put
      << R"("expect":{"status":201,"outcom":"executed"}}]},)"
      << R"({"name":"carol","steps":[)" << put
      << R"("principal":"carol","expect":{"status":201}}]})"
      << "]}\n";
  std::ofstream(vectors / "broken.json") << "{not json\n";
  auto args = keys(url);
  args.insert(args.end(), {"--vectors", vectors.string(), "--no-black-box"});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.row("typos/fine").find("| pass   |"), std::string::npos) << r.out;
  EXPECT_NE(r.row("typos/principle").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 0: unknown key \"principle\""), std::string::npos) << r.out;
  EXPECT_NE(r.row("typos/outcom").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 0 expect: unknown key \"outcom\""), std::string::npos) << r.out;
  EXPECT_NE(r.row("typos/carol").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the case could not run: unknown principal carol"), std::string::npos)
      << r.out;
  EXPECT_NE(r.row("broken/(file)").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 passed, 0 pass* (weaker check, see detail), 4 failed, 0 skipped"),
            std::string::npos)
      << r.out;
}

TEST(conformance_tool_usage, list_needs_no_server_and_names_the_cases_as_run) {
  const tool_run r = run_tool({"--list"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\nretention/tombstones-stay-one-window\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nblack-box/concurrent-posts\n"), std::string::npos) << r.out;
  const tool_run only = run_tool({"--list", "--only", "black-box/life"});
  EXPECT_EQ(only.out, "black-box/lifecycle\n");
}

TEST(conformance_tool_usage, help_documents_every_option_and_usage_errors_exit_2) {
  const tool_run help = run_tool({"--help"});
  EXPECT_EQ(help.status, 0);
  for (const char* option : {"--base-url",
                             "--route",
                             "--key",
                             "--key-file",
                             "--second-key",
                             "--second-key-file",
                             "--test-control-key",
                             "--test-control-key-file",
                             "--ca-file",
                             "--insecure",
                             "--client-cert",
                             "--client-key",
                             "--body",
                             "--invalid-body",
                             "--spec-limits",
                             "--max-body-bytes",
                             "--clock-tolerance-ms",
                             "--concurrency",
                             "--timeout-ms",
                             "--vectors",
                             "--only",
                             "--no-vectors",
                             "--no-black-box",
                             "--list",
                             "--json"})
    EXPECT_NE(help.out.find(std::string(option) + " "), std::string::npos) << option;
  EXPECT_EQ(run_tool({"--base-url", "ftp://x", "--key", "k"}).status, 2);
  EXPECT_EQ(run_tool({"--no-such-option"}).status, 2);
  EXPECT_EQ(run_tool({"--key", "k"}).status, 2);  // no --base-url
}

TEST(conformance_tool_usage, the_base_url_is_read_by_the_common_url_parser) {
  const tool_run path = run_tool({"--base-url", "http://127.0.0.1:8080/payment", "--key", "k"});
  EXPECT_EQ(path.status, 2);
  EXPECT_NE(path.out.find("has a path or query"), std::string::npos) << path.out;
  const tool_run user = run_tool({"--base-url", "https://me@example.com", "--key", "k"});
  EXPECT_EQ(user.status, 2);
  EXPECT_NE(user.out.find("user information"), std::string::npos) << user.out;
  const tool_run port = run_tool({"--base-url", "http://[::1]:0", "--key", "k"});
  EXPECT_EQ(port.status, 2);
  EXPECT_NE(port.out.find("bad port"), std::string::npos) << port.out;
}

}  // namespace
}  // namespace exactly::test
