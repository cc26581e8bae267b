// Each durable execution wakes the server's outbox dispatcher: a message sent by business logic
// is delivered at once, not at the dispatcher's next poll.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace exactly::test {
namespace {

TEST(outbox_wake, a_message_sent_by_logic_is_delivered_without_waiting_for_the_poll) {
  temp_dir dir;
  server::connector c({.db_path = (dir.path() / "server.db").string()});
  c.route<std::string>(
      "/notify/{id}",
      [](const server::incoming_request& in) -> server::parse_result<std::string> {
        return std::string(in.body);
      },
      [](server::session<std::string>& s) {
        s.send("note", {{"id", s.id().to_string()}});
        return server::stored_response{200, "text/plain", "sent"};
      });
  std::atomic<int> delivered{0};
  c.on_message("note", [&](server::message_context&) { ++delivered; });
  // A poll so rare that only the wake-up can deliver the message within the test.
  server::http_server http({.open_mode = true, .dispatch_interval = std::chrono::minutes(10)}, c);
  http_client client(http.start());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the first poll has passed

  const std::string path = "/notify/" + request_id::mint().to_string();
  const header_list text = {{"Content-Type", "text/plain"}};
  ASSERT_EQ(client.request("PUT", path, "hello", text).status, 201u);
  ASSERT_EQ(client.request("POST", path, "", text).status, 200u);
  for (int i = 0; i < 500 && delivered.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(delivered.load(), 1);
  http.stop();
  EXPECT_EQ(delivered.load(), 1);
}

}  // namespace
}  // namespace exactly::test
