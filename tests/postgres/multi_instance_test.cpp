// Two connector instances over one PostgreSQL database, each an HTTP server: copies of one
// request sent to both at once, counted in the database.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <pg_cluster.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace exactly::test {
namespace {

// Two instances sharing one fresh schema.
struct two_instances {
  echo_server_config config() const {
    echo_server_config c;
    c.postgres = conninfo;
    c.max_staged_per_principal = 1000;
    return c;
  }
  std::string conninfo = test_cluster().fresh_schema();
  echo_server a{config()};
  echo_server b{config()};
};

// Sends `first` on one thread and `second` on another at the same moment; both answers.
template <class F, class G>
std::pair<test_response, test_response> at_once(F first, G second) {
  std::atomic<int> ready{0};
  test_response r1, r2;
  std::thread t([&] {
    ++ready;
    while (ready.load() < 2)
      std::this_thread::yield();
    r1 = first();
  });
  ++ready;
  while (ready.load() < 2)
    std::this_thread::yield();
  r2 = second();
  t.join();
  return {r1, r2};
}

TEST(multi_instance, a_post_sent_to_two_instances_at_once_executes_once) {
  two_instances s;
  http_client a(s.a.port()), b(s.b.port());
  constexpr int rounds = 150;
  std::vector<std::string> ids;
  for (int i = 0; i < rounds; ++i) {
    const std::string id = request_id::mint(s.a.now_ms()).to_string();
    ids.push_back(id);
    const std::string body = R"({"status":200,"reply":)" + std::to_string(i) + "}";
    ASSERT_EQ(a.request("PUT", path_of(id), body, alice).status, 201u);
    const auto [ra, rb] = at_once([&] { return a.request("POST", path_of(id), "", alice); },
                                  [&] { return b.request("POST", path_of(id), "", alice); });
    ASSERT_EQ(ra.status, 200u) << ra.body;
    ASSERT_EQ(rb.status, 200u) << rb.body;
    EXPECT_EQ(ra.body, rb.body);
    const int executed = (ra.header("exactly-once-outcome") == "executed") +
                         (rb.header("exactly-once-outcome") == "executed");
    EXPECT_EQ(executed, 1) << "round " << i;
  }
  EXPECT_EQ(s.a.executions_total(), rounds);
  for (const std::string& id : ids)
    EXPECT_EQ(s.b.executions(id), 1) << id;
  // Both instances dispatch the outbox: each message is delivered once.
  EXPECT_TRUE(eventually([&] { return s.a.outbox_pending() == 0; }));
  for (const std::string& id : ids)
    EXPECT_EQ(s.a.deliveries(id), 1) << id;
}

TEST(multi_instance, concurrent_puts_of_one_id_across_instances_give_one_201) {
  two_instances s;
  http_client a(s.a.port()), b(s.b.port());
  for (int i = 0; i < 100; ++i) {
    const std::string id = request_id::mint(s.a.now_ms()).to_string();
    const std::string body = R"({"status":201})";
    const auto [ra, rb] = at_once([&] { return a.request("PUT", path_of(id), body, alice); },
                                  [&] { return b.request("PUT", path_of(id), body, alice); });
    const std::multiset<unsigned> statuses{ra.status, rb.status};
    EXPECT_EQ(statuses, (std::multiset<unsigned>{200u, 201u})) << ra.body << rb.body;
  }
  EXPECT_EQ(s.a.rows().staged, 100);
}

TEST(multi_instance, a_delete_racing_a_post_on_another_instance_never_executes_twice) {
  two_instances s;
  http_client a(s.a.port()), b(s.b.port());
  int executed_answers = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string id = request_id::mint(s.a.now_ms()).to_string();
    ASSERT_EQ(a.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
    const auto [post, del] = at_once([&] { return a.request("POST", path_of(id), "", alice); },
                                     [&] { return b.request("DELETE", path_of(id), "", alice); });
    EXPECT_EQ(del.status, 204u);
    const bool ran = post.status == 200 && post.header("exactly-once-outcome") == "executed";
    if (!ran) {
      EXPECT_EQ(post.status, 410u) << post.body;  // consumed by the DELETE first
    }
    executed_answers += ran;
    // Neither a late POST nor a late PUT brings the id back.
    EXPECT_EQ(b.request("POST", path_of(id), "", alice).status, 410u);
    EXPECT_EQ(a.request("PUT", path_of(id), R"({"status":200})", alice).status, 410u);
    EXPECT_EQ(s.a.executions(id), ran ? 1 : 0) << id;
  }
  EXPECT_EQ(s.b.executions_total(), executed_answers);
}

}  // namespace
}  // namespace exactly::test
