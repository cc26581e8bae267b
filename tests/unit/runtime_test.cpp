// The runtime's worker threads: idle workers wake on notify() instead of waiting out idle_poll.

#include <exactly/client/runtime.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace exactly::client {
namespace {

TEST(runtime_test, notify_wakes_an_idle_worker_before_its_idle_poll) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("exactly-runtime-" + request_id::mint().to_string());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "app.db").string();
  {
    sqlite::connection app(path);
    app.exec("CREATE TABLE pings (n INTEGER)");
    endpoint outside("pinger", app, {});
    runtime rt(path, {},
               [](sqlite::connection& db) {
                 std::vector<std::unique_ptr<endpoint>> eps;
                 eps.push_back(std::make_unique<endpoint>("pinger", db, endpoint_options{}));
                 eps[0]->on("ping", [](handler_context& ctx) {
                   ctx.db().prepare("INSERT INTO pings VALUES (1)").run();
                 });
                 return eps;
               },
               {.workers = 1, .idle_poll = std::chrono::seconds(30)});
    rt.start();
    auto pings = [&] { return *app.query_int64("SELECT count(*) FROM pings"); };
    auto handled_within = [&](std::int64_t n, auto limit) {
      const auto until = std::chrono::steady_clock::now() + limit;
      while (pings() < n && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return pings() >= n;
    };
    // A first ping, noticed, proves the worker runs; after it the worker finds nothing and idles.
    outside.send("pinger", {.type = "ping"});
    rt.notify();
    ASSERT_TRUE(handled_within(1, std::chrono::seconds(10)));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));

    outside.send("pinger", {.type = "ping"});
    EXPECT_FALSE(handled_within(2, std::chrono::milliseconds(300)))
        << "without notify() the worker waits out its idle poll";
    rt.notify();
    EXPECT_TRUE(handled_within(2, std::chrono::seconds(10)));
    rt.stop();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace exactly::client
