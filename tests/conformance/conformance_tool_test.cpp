// exactly-conformance run as a user runs it, against processes on loopback: the sample servers
// pass; each deliberately broken server fails, on the case that checks the rule it breaks.

#include <child_process.hpp>
#include <echo_server.hpp>

#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace exactly::test {
namespace {

const std::string alice_key = "alice-conformance-0123456789";
const std::string bob_key = "bob-conformance-0123456789ab";
const std::string control_key = "test-control-0123456789abcdef";

// The arguments quoted for /bin/sh.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct tool_run {
  int status = -1;  // exit status
  std::string out;  // stdout and stderr
  // The table row of `name` ("name | result | detail"), or "".
  std::string row(const std::string& name) const {
    for (std::size_t at = 0; (at = out.find(name + " ", at)) != std::string::npos; ++at) {
      if (at == 0 || out[at - 1] == '\n')
        return out.substr(at, out.find('\n', at) - at);
    }
    return "";
  }
};

tool_run run_tool(const std::vector<std::string>& args) {
  std::string line = quoted(EXACTLY_CONFORMANCE);
  for (const std::string& a : args)
    line += " " + quoted(a);
  tool_run r;
  FILE* p = popen((line + " 2>&1").c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p))
    r.out.append(buf, n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
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
  std::string start(const std::vector<std::string>& argv) {
    std::string line = "exec env -u EXACTLY_API_KEYS -u EXACTLY_TEST_CONTROL_KEY";
    for (const std::string& a : argv)
      line += " " + quoted(a);
    line += " 2>" + quoted((dir_.path() / "stderr").string());
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
  void TearDown() override {
    if (server_) {
      EXPECT_EQ(server_->terminate(), 0);
    }
  }

  temp_dir dir_;
  std::unique_ptr<child_process> server_;
};

TEST_F(conformance_tool, echo_server_with_test_control_passes_every_case) {
  const std::string url =
      start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(), "--api-keys-file",
             keys_file(), "--test-control-key-file", control_file(), "--max-body-bytes", "1024",
             "--max-staged-per-principal", "3", "--max-staged-bytes-per-principal", "2048"});
  auto args = keys(url);
  args.insert(args.end(), {"--test-control-key-file", control_file(), "--spec-limits",
                           "--max-body-bytes", "1024"});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" passed, 0 failed, 0 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.row("retention/tombstones-stay-one-window").find("| pass"), std::string::npos);
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| pass"), std::string::npos);
}

TEST_F(conformance_tool, without_test_control_the_clock_cases_are_skipped_with_the_reason) {
  const std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                                 "--api-keys-file", keys_file()});
  const tool_run r = run_tool(keys(url));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" passed, 0 failed, "), std::string::npos) << r.out;
  const std::string row = r.row("retention/tombstones-stay-one-window");
  EXPECT_NE(row.find("| skip"), std::string::npos) << row;
  EXPECT_NE(row.find("needs the test-control interface"), std::string::npos) << row;
  const std::string counted = r.row("put/put-unknown-stages");
  EXPECT_NE(counted.find("| pass"), std::string::npos) << counted;
  EXPECT_NE(counted.find("row counts NOT checked"), std::string::npos) << counted;
  EXPECT_NE(r.row("limits/staged-limit-per-principal").find("--spec-limits"), std::string::npos);
}

TEST_F(conformance_tool, test_control_is_off_by_default) {
  const std::string url = start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(),
                                 "--api-keys-file", keys_file()});
  auto args = keys(url);
  args.insert(args.end(), {"--test-control-key", control_key});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("test-control interface does not answer"), std::string::npos) << r.out;
}

TEST_F(conformance_tool, test_control_refuses_another_key) {
  const std::string url =
      start({EXACTLY_ECHO_SERVER, "--listen", "127.0.0.1:0", "--db", db(), "--api-keys-file",
             keys_file(), "--test-control-key-file", control_file()});
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
             keys_file(), "--test-control-key-file", control_file()});
  auto args = keys(url);
  args.insert(args.end(),
              {"--test-control-key-file", control_file(), "--route", "/payment/authorize/{id}",
               "--body", R"({"customer_id":"conformance","amount_cents":1,"reference":"r-{n}"})",
               "--invalid-body", R"({"amount_cents":-1})"});
  const tool_run r = run_tool(args);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" passed, 0 failed, "), std::string::npos) << r.out;
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| pass"), std::string::npos) << r.out;
  EXPECT_NE(r.row("post/failing-logic-is-500-and-stays-staged").find("| skip"), std::string::npos);
  // payment-service cannot count executions: they are counted from the answers, and it says so.
  EXPECT_NE(r.row("post/post-staged-executes-once").find("executions counted from"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, a_server_that_restages_a_deleted_id_fails) {
  const std::string json_file = (dir_.path() / "results.json").string();
  auto args = keys(broken("restage"));
  args.insert(args.end(), {"--json", json_file});
  const tool_run r = run_tool(args);
  std::ifstream in(json_file);
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_GT(doc.at("failed").get<int>(), 0);
  bool lifecycle_failed = false;
  for (const auto& c : doc.at("cases")) {
    if (c.at("name") == "black-box/lifecycle")
      lifecycle_failed = c.at("result") == "FAIL" && !c.at("failures").empty();
  }
  EXPECT_TRUE(lifecycle_failed) << doc.dump(1);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.row("black-box/lifecycle").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.row("put/put-after-delete-is-410-consumed").find("| FAIL"), std::string::npos);
  EXPECT_NE(r.out.find("PUT after DELETE (re-staging): status: want 410, got 201"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, a_server_that_executes_concurrent_posts_twice_fails) {
  const tool_run r = run_tool(keys(broken("double-execute")));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("want exactly 1 answer \"executed\""), std::string::npos) << r.out;
}

TEST_F(conformance_tool, a_server_that_answers_404_where_410_is_due_fails) {
  const tool_run r = run_tool(keys(broken("gone-as-404")));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.row("black-box/state-unknown-old").find("| FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.row("get/get-unknown-old-id-is-410-too-old").find("| FAIL"), std::string::npos)
      << r.out;
  EXPECT_NE(r.row("post/post-unknown-old-id-is-410-too-old-for-every-principal").find("| FAIL"),
            std::string::npos)
      << r.out;
}

TEST_F(conformance_tool, the_broken_server_passes_what_it_does_not_break) {
  // The broken servers are the real one but for their one rule: the lifecycle passes on one
  // that answers 404 for old ids, so the failures above are the rules', not the harness's.
  const tool_run r = run_tool(keys(broken("gone-as-404")));
  EXPECT_NE(r.row("black-box/lifecycle").find("| pass"), std::string::npos) << r.out;
  EXPECT_NE(r.row("black-box/concurrent-posts").find("| pass"), std::string::npos) << r.out;
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
}

}  // namespace
}  // namespace exactly::test
