// Replays every test vector of proto-spec/vectors against a real server on loopback.

#include <echo_server.hpp>
#include <http_client.hpp>

#include <exactly/common/http_date.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

namespace exactly::test {
namespace {

using json = nlohmann::json;

std::vector<std::string> vector_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(EXACTLY_VECTORS_DIR)) {
    if (e.path().extension() == ".json")
      out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class vectors : public ::testing::TestWithParam<std::string> {};

// The server clock before and after a request step: whatever the server stamped then lies within.
struct step_time {
  std::int64_t before_ms = 0, after_ms = 0;
};

// Checks the Exactly-Once-Retention header against `want`: null = absent; else an HTTP-date of
// `plus_seconds` after the server clock during the step labelled `since` (this step when absent),
// rounded down to the second.
void expect_retention(const test_response& r, const json& want, step_time here,
                      const std::map<std::string, step_time>& labelled) {
  if (want.is_null()) {
    EXPECT_FALSE(r.has_header("exactly-once-retention")) << r.header("exactly-once-retention");
    return;
  }
  step_time at = here;
  if (want.contains("since")) {
    const auto it = labelled.find(want.at("since").get<std::string>());
    ASSERT_NE(it, labelled.end()) << "no step labelled " << want.at("since");
    at = it->second;
  }
  const std::int64_t plus_ms = want.at("plus_seconds").get<std::int64_t>() * 1000;
  ASSERT_TRUE(r.has_header("exactly-once-retention"));
  const auto date = parse_http_date(r.header("exactly-once-retention"));
  ASSERT_TRUE(date.has_value()) << r.header("exactly-once-retention");
  EXPECT_GE(*date, (at.before_ms + plus_ms) / 1000 * 1000) << r.header("exactly-once-retention");
  EXPECT_LE(*date, (at.after_ms + plus_ms) / 1000 * 1000) << r.header("exactly-once-retention");
}

std::string padded_body(std::size_t size) {
  std::string head = R"({"status":200,"reply":")";
  const std::string tail = R"("})";
  if (size < head.size() + tail.size())
    throw std::invalid_argument("body_pad_to too small");
  return head + std::string(size - head.size() - tail.size(), 'x') + tail;
}

void run_case(const json& c) {
  echo_server server;
  http_client client(server.port());
  std::map<std::string, std::string> ids;
  std::map<std::string, step_time> labelled;
  auto id_for = [&](const std::string& name) -> std::string {
    auto it = ids.find(name);
    if (it != ids.end())
      return it->second;
    std::int64_t at = server.now_ms();
    if (name == "@old")
      at -= 2 * 3600 * 1000;
    if (name == "@future")
      at += 3600 * 1000;
    if (name == "@almost-old")
      at -= 50 * 60 * 1000;
    return ids[name] = request_id::mint(at).to_string();
  };

  int index = 0;
  for (const json& step : c.at("steps")) {
    SCOPED_TRACE("step " + std::to_string(index++) + ": " + step.dump());
    if (step.contains("advance_clock_seconds")) {
      server.advance_seconds(step.at("advance_clock_seconds").get<std::int64_t>());
      continue;
    }
    if (step.contains("sweep")) {
      server.sweep();
      continue;
    }
    if (step.contains("expect_rows")) {
      const auto rows = server.rows();
      const json& want = step.at("expect_rows");
      if (want.contains("staged")) {
        EXPECT_EQ(rows.staged, want.at("staged").get<std::int64_t>());
      }
      if (want.contains("executed")) {
        EXPECT_EQ(rows.executed, want.at("executed").get<std::int64_t>());
      }
      if (want.contains("tombstone")) {
        EXPECT_EQ(rows.tombstone, want.at("tombstone").get<std::int64_t>());
      }
      continue;
    }

    const std::string method = step.at("method");
    std::string id;
    std::string target;
    if (step.contains("path")) {
      target = step.at("path");
    } else {
      id = step.contains("raw_id") ? step.at("raw_id").get<std::string>()
                                   : id_for(step.at("id").get<std::string>());
      target = "/vectors/echo/" + id;
    }
    std::vector<std::pair<std::string, std::string>> headers;
    const std::string principal = step.value("principal", "alice");
    if (principal == "alice" || principal == "bob") {
      headers.emplace_back("Authorization", "Bearer " + principal + "-key");
    } else if (principal == "wrong") {
      headers.emplace_back("Authorization", "Bearer not-a-key");
    } else if (principal != "none") {
      FAIL() << "unknown principal " << principal;
    }
    std::string body = step.value("body", "");
    if (step.contains("body_pad_to"))
      body = padded_body(step.at("body_pad_to").get<std::size_t>());
    headers.emplace_back("Content-Type", step.value("content_type", "application/json"));

    step_time here{server.now_ms(), 0};
    const test_response r = client.request(method, target, body, headers);
    here.after_ms = server.now_ms();
    if (step.contains("label"))
      labelled[step.at("label").get<std::string>()] = here;
    const json& expect = step.at("expect");
    EXPECT_EQ(r.status, expect.at("status").get<unsigned>()) << r.body;
    if (expect.contains("outcome")) {
      if (expect.at("outcome").is_null()) {
        EXPECT_FALSE(r.has_header("exactly-once-outcome"));
      } else {
        EXPECT_EQ(r.header("exactly-once-outcome"), expect.at("outcome").get<std::string>());
      }
    }
    if (expect.contains("problem")) {
      if (expect.at("problem").is_null()) {
        EXPECT_NE(r.header("content-type"), protocol::problem_content_type);
      } else {
        EXPECT_EQ(r.header("content-type"), protocol::problem_content_type);
        const auto p = parse_problem(r.body);
        ASSERT_TRUE(p.has_value()) << r.body;
        EXPECT_EQ(p->name(), expect.at("problem").get<std::string>());
        EXPECT_EQ(p->status, r.status);
        EXPECT_FALSE(r.has_header("exactly-once-outcome"));
        EXPECT_FALSE(r.has_header("exactly-once-retention"));
      }
    }
    if (expect.contains("retention"))
      expect_retention(r, expect.at("retention"), here, labelled);
    if (expect.contains("body")) {
      EXPECT_EQ(r.body, expect.at("body").get<std::string>());
    }
    if (expect.contains("content_type")) {
      EXPECT_EQ(r.header("content-type"), expect.at("content_type").get<std::string>());
    }
    if (expect.contains("headers")) {
      for (const auto& [name, value] : expect.at("headers").items()) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        EXPECT_EQ(r.header(lower), value.get<std::string>()) << name;
      }
    }
    if (expect.contains("executions")) {
      EXPECT_EQ(server.executions(id), expect.at("executions").get<std::int64_t>());
    }
  }
}

TEST_P(vectors, replay_every_case) {
  std::ifstream in(std::filesystem::path(EXACTLY_VECTORS_DIR) / GetParam());
  const json doc = json::parse(in);
  ASSERT_TRUE(doc.contains("cases"));
  ASSERT_FALSE(doc.at("cases").empty());
  for (const json& c : doc.at("cases")) {
    SCOPED_TRACE("case " + c.at("name").get<std::string>());
    run_case(c);
  }
}

INSTANTIATE_TEST_SUITE_P(proto_spec, vectors, ::testing::ValuesIn(vector_files()),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(vectors_files, exist) {
  EXPECT_GE(vector_files().size(), 5u);
}

}  // namespace
}  // namespace exactly::test
