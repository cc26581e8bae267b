// Through the fault proxy: requests dropped, responses lost after the server acted, connections
// reset, requests duplicated. A client that retries as the protocol says still gets exactly one
// execution per id, counted in the server's database.

#include <echo_server.hpp>
#include <fault_proxy.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {

// Sends until an answer arrives (a lost answer throws system_error from the client).
test_response until_answered(http_client& c, const std::string& method, const std::string& path,
                             const std::string& body = "") {
  for (;;) {
    try {
      return c.request(method, path, body, alice);
    } catch (const boost::system::system_error&) {
    }
  }
}

TEST(lost_response, every_fault_still_executes_exactly_once) {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 1000;
  echo_server server(cfg);
  tools::fault_proxy proxy({.upstream_port = server.port(),
                            .drop_request = 0.1,
                            .drop_response = 0.2,
                            .reset = 0.1,
                            .delay = 0.05,
                            .delay_ms = 20,
                            .duplicate = 0.2,
                            .seed = 42});
  http_client c(proxy.start());
  constexpr int n = 150;
  std::vector<std::string> ids;
  int protocol_faults = 0;
  for (int i = 0; i < n; ++i) {
    const std::string id = request_id::mint(server.now_ms()).to_string();
    ids.push_back(id);
    const auto put = until_answered(c, "PUT", path_of(id), R"({"status":200,"reply":"x"})");
    if (put.status != 201 && put.status != 200)
      ++protocol_faults;  // 200: a lost 201
    test_response post;
    do {
      post = until_answered(c, "POST", path_of(id));
    } while (!post.has_header("exactly-once-outcome") && post.status >= 500);
    if (post.body != R"({"reply":"x"})")
      ++protocol_faults;
    const auto get = until_answered(c, "GET", path_of(id));
    if (get.header("exactly-once-outcome") != "replayed")
      ++protocol_faults;
    if (until_answered(c, "DELETE", path_of(id)).status != 204)
      ++protocol_faults;
  }
  const tools::fault_counts f = proxy.counts();
  EXPECT_GT(f.dropped_requests, 0u);
  EXPECT_GT(f.dropped_responses, 0u);
  EXPECT_GT(f.resets, 0u);
  EXPECT_GT(f.duplicates, 0u);
  EXPECT_EQ(protocol_faults, 0);
  EXPECT_EQ(server.executions_total(), n);
  for (const auto& id : ids)
    EXPECT_EQ(server.executions(id), 1) << id;
  EXPECT_TRUE(eventually([&] { return server.outbox_pending() == 0; }));
  for (const auto& id : ids)
    EXPECT_EQ(server.deliveries(id), 1) << id;
  const auto rows = server.rows();
  EXPECT_EQ(rows.staged, 0);
  EXPECT_EQ(rows.executed, 0);
  EXPECT_EQ(rows.tombstone, n);
}

}  // namespace
}  // namespace exactly::test
