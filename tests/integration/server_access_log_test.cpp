// The server's access log: off by default; when on, exactly one line per request with its time,
// peer, principal, method, target, status, body bytes, duration and outcome, to a file or
// through spdlog.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace exactly::test {
namespace {

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;)
    out.push_back(f);
  return out;
}

// time, remote, principal, method, target, status, bytes, duration, outcome
constexpr std::size_t time_f = 0, remote_f = 1, principal_f = 2, method_f = 3, target_f = 4,
                      status_f = 5, bytes_f = 6, duration_f = 7, outcome_f = 8;

// Runs `fn` with spdlog's default logger writing bare messages into the returned text.
template <class F>
std::string spdlog_output_of(F fn) {
  std::ostringstream out;
  const auto previous = spdlog::default_logger();
  auto capture = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  capture->set_pattern("%v");
  spdlog::set_default_logger(capture);
  fn();
  spdlog::set_default_logger(previous);
  return out.str();
}

// The access lines of spdlog output, without their "access " prefix.
std::vector<std::string> access_lines(const std::string& output) {
  std::vector<std::string> access;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("access ", 0) == 0)
      access.push_back(line.substr(7));
  }
  return access;
}

TEST(server_access_log, is_off_by_default) {
  EXPECT_FALSE(server::server_options{}.access_log.enabled);
  temp_dir dir;
  const auto file = dir.path() / "access.log";
  const std::string output = spdlog_output_of([&] {
    // A file named but the log not enabled: nothing is written, there or through spdlog.
    echo_server server({.access_log = {.file = file.string()}});
    http_client c(server.port());
    const std::string id = request_id::mint(server.now_ms()).to_string();
    EXPECT_EQ(c.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
  });
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_TRUE(access_lines(output).empty()) << output;
}

TEST(server_access_log, writes_one_line_per_request_with_its_fields) {
  temp_dir dir;
  const auto file = dir.path() / "access.log";
  echo_server server({.access_log = {.enabled = true, .file = file.string()}});
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();

  const auto put = c.request("PUT", path_of(id), R"({"status":200,"reply":"hi"})", alice);
  ASSERT_EQ(put.status, 201u);
  const auto post = c.request("POST", path_of(id), "", alice);
  const auto again = c.request("POST", path_of(id), "", alice);
  const auto refused = c.request("GET", path_of(id));  // no key: 401
  const auto health = c.request("GET", "/healthz");
  ASSERT_EQ(post.header("exactly-once-outcome"), "executed");
  ASSERT_EQ(again.header("exactly-once-outcome"), "replayed");
  ASSERT_EQ(refused.status, 401u);
  server.stop();  // a line is written once its answer is: all of them by now

  const auto lines = lines_of(file);
  ASSERT_EQ(lines.size(), 5u);
  std::vector<std::vector<std::string>> f;
  for (const auto& l : lines) {
    f.push_back(fields_of(l));
    ASSERT_EQ(f.back().size(), 9u) << l;
    EXPECT_TRUE(
        std::regex_match(f.back()[time_f], std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << l;
    EXPECT_TRUE(std::regex_match(f.back()[remote_f], std::regex(R"(127\.0\.0\.1:\d+)"))) << l;
    EXPECT_TRUE(std::regex_match(f.back()[duration_f], std::regex(R"(\d+\.\d{3}ms)"))) << l;
  }
  const std::vector<std::string> methods{"PUT", "POST", "POST", "GET", "GET"};
  const std::vector<unsigned> statuses{put.status, post.status, again.status, 401u, 200u};
  const std::vector<std::size_t> bytes{put.body.size(), post.body.size(), again.body.size(),
                                       refused.body.size(), health.body.size()};
  const std::vector<std::string> principals{"alice", "alice", "alice", "-", "-"};
  const std::vector<std::string> outcomes{"-", "executed", "replayed", "-", "-"};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(f[i][method_f], methods[i]);
    EXPECT_EQ(f[i][target_f], i < 4 ? path_of(id) : "/healthz");
    EXPECT_EQ(f[i][status_f], std::to_string(statuses[i]));
    EXPECT_EQ(f[i][bytes_f], std::to_string(bytes[i]));
    EXPECT_EQ(f[i][principal_f], principals[i]);
    EXPECT_EQ(f[i][outcome_f], outcomes[i]);
  }
  // All from one kept-alive connection.
  EXPECT_EQ(f[0][remote_f], f[4][remote_f]);
}

TEST(server_access_log, goes_through_spdlog_without_a_file) {
  const std::string output = spdlog_output_of([] {
    echo_server server({.access_log = {.enabled = true}});
    http_client c(server.port());
    const std::string id = request_id::mint(server.now_ms()).to_string();
    EXPECT_EQ(c.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
  });  // the server stopped: its line is written
  const auto access = access_lines(output);
  ASSERT_EQ(access.size(), 1u) << output;
  const auto f = fields_of(access[0]);
  ASSERT_EQ(f.size(), 9u);
  EXPECT_EQ(f[principal_f], "alice");
  EXPECT_EQ(f[method_f], "PUT");
  EXPECT_EQ(f[status_f], "201");
}

}  // namespace
}  // namespace exactly::test
