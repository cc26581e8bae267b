// Replays every test vector of proto-spec/vectors, and the conformance tool's black-box cases,
// against an in-process echo server on loopback: the runner of exactly-conformance with the
// server's clock, sweeper and counters reached directly instead of over HTTP.

#include <certificates.hpp>
#include <echo_server.hpp>

#include <black_box.hpp>
#include <http_connection.hpp>
#include <table.hpp>
#include <vector_runner.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace exactly::test {
namespace {

namespace cf = exactly::conformance;
using json = nlohmann::json;

// The controls of proto-spec §12, in-process.
class echo_controls final : public cf::controls {
 public:
  explicit echo_controls(echo_server& s) : s_(s) {}
  std::optional<std::int64_t> now_ms() override { return s_.now_ms(); }
  bool advance_seconds(std::int64_t seconds) override {
    s_.advance_seconds(seconds);
    return true;
  }
  bool sweep() override {
    s_.sweep();
    return true;
  }
  std::optional<cf::row_counts> rows() override {
    const auto r = s_.rows();
    return cf::row_counts{r.staged, r.executed, r.tombstone};
  }
  std::optional<std::int64_t> executions(const std::string& id) override {
    return s_.executions(id);
  }

 private:
  echo_server& s_;
};

// A fresh echo server configured as §11 says, for one case; over https with `tls`.
struct echo_target : cf::target {
  explicit echo_target(echo_server_config cfg = {}) : server(std::move(cfg)) {
    at.port = server.port();
    control = &controls;
    fresh = true;
  }
  echo_server server;
  echo_controls controls{server};
};

// What §11 configures: keys alice-key and bob-key, the echo route, its limits.
cf::run_options spec_options() {
  cf::run_options o;
  o.key = "alice-key";
  o.second_key = "bob-key";
  o.spec_limits = true;
  o.max_body_bytes = echo_server_config{}.max_body_bytes;
  o.clock_tolerance_ms = 0;
  return o;
}

// Every check that failed as a test failure; nothing may be skipped in-process.
void report(const cf::case_result& r) {
  SCOPED_TRACE("case " + r.name);
  EXPECT_NE(r.result, cf::verdict::skip) << r.detail;
  for (const std::string& f : r.failures)
    ADD_FAILURE() << f;
  if (r.result == cf::verdict::fail) {
    EXPECT_FALSE(r.failures.empty());
  }
}

std::vector<std::string> vector_file_names() {
  std::vector<std::string> out;
  for (const auto& p : cf::vector_files(EXACTLY_VECTORS_DIR))
    out.push_back(p.filename().string());
  return out;
}

class vectors : public ::testing::TestWithParam<std::string> {};

TEST_P(vectors, replay_every_case) {
  const auto results = cf::run_vector_file(
      std::filesystem::path(EXACTLY_VECTORS_DIR) / GetParam(),
      [] { return std::make_unique<echo_target>(); }, spec_options());
  ASSERT_FALSE(results.empty());
  for (const cf::case_result& r : results)
    report(r);
}

INSTANTIATE_TEST_SUITE_P(proto_spec, vectors, ::testing::ValuesIn(vector_file_names()),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(vectors_files, exist) {
  EXPECT_GE(vector_file_names().size(), 5u);
}

// The conformance tool's own cases pass against the reference server.
TEST(conformance_black_box, every_case_passes_in_process) {
  ASSERT_GE(cf::black_box_cases().size(), 10u);
  for (const cf::black_box_case& c : cf::black_box_cases()) {
    echo_target t;
    report(c.run(t, spec_options()));
  }
}

// A server may close after any answer (Connection: close): the runner's pipelining then reports
// that the rest went unanswered, instead of reading from the closed connection.
TEST(conformance_connection, a_close_after_the_first_pipelined_answer_is_reported) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::thread server([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    char buf[4096];
    std::string got;
    while (got.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0)
        break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    const std::string answer =
        "HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)!::write(c, answer.data(), answer.size());
    ::close(c);
  });
  cf::http_connection conn(cf::endpoint{.port = ntohs(addr.sin_port)});
  const auto answers = conn.pipeline({{"GET", "/a"}, {"GET", "/b"}, {"GET", "/c"}});
  server.join();
  ::close(listener);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].status, 201u);
  EXPECT_EQ(answers[1].status, 0u);
  EXPECT_NE(answers[1].error.find("closed the connection after answer 1"), std::string::npos)
      << answers[1].error;
}

// A failure quoting an answer that is not UTF-8 still makes a JSON report (bytes replaced).
TEST(conformance_report, answers_that_are_not_utf8_still_make_json) {
  std::ostringstream out;
  cf::write_json(out, {cf::case_result{"a-case", cf::verdict::fail, "", {"body: \xff\xfe"}}});
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc.at("failed").get<int>(), 1);
  EXPECT_EQ(doc.at("cases").at(0).at("failures").at(0).get<std::string>(), "body: \uFFFD\uFFFD");
}

// An echo server over https with a fresh certificate for 127.0.0.1 in `dir` (its PEM: `pem`).
echo_server_config https_config(const temp_dir& dir, std::string& pem) {
  pem = (dir.path() / "server.pem").string();
  const std::string key = (dir.path() / "server.key").string();
  make_certificate("IP:127.0.0.1", pem, key);
  echo_server_config cfg;
  cfg.tls.certificate_chain_file = pem;
  cfg.tls.private_key_file = key;
  return cfg;
}

// The same over https, the runner trusting the server's certificate: transport B's TLS path.
TEST(conformance_black_box, every_case_passes_over_tls) {
  temp_dir dir;
  std::string pem;
  const echo_server_config cfg = https_config(dir, pem);
  for (const cf::black_box_case& c : cf::black_box_cases()) {
    echo_target t(cfg);
    t.at.tls = true;
    t.at.ca_file = pem;
    report(c.run(t, spec_options()));
  }
}

// Over https, a runner that does not trust the server's certificate gets no answer: it fails.
TEST(conformance_black_box, an_untrusted_certificate_fails_the_cases) {
  temp_dir dir;
  std::string pem;
  echo_target t(https_config(dir, pem));
  t.at.tls = true;
  const cf::case_result r = cf::black_box_cases().front().run(t, spec_options());
  EXPECT_EQ(r.result, cf::verdict::fail);
  ASSERT_FALSE(r.failures.empty());
  EXPECT_NE(r.failures.front().find("no answer"), std::string::npos) << r.failures.front();
}

}  // namespace
}  // namespace exactly::test
