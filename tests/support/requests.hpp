#pragma once
// Shared request helpers of the integration and crash tests.

#include "http_client.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace exactly::test {

using header_list = std::vector<std::pair<std::string, std::string>>;

// Principal alice's key and a JSON body type, for echo_server's default keys.
inline const header_list alice = {{"Authorization", "Bearer alice-key"},
                                  {"Content-Type", "application/json"}};

// The echo route's path for `id`.
inline std::string path_of(const std::string& id) {
  return "/vectors/echo/" + id;
}

// PUT, POST, GET and DELETE of the fresh id `id` on the echo route as alice: whether each
// answered as it should (201, executed, replayed, 204).
inline bool full_cycle(http_client& c, const std::string& id) {
  return c.request("PUT", path_of(id), R"({"status":201,"reply":1})", alice).status == 201 &&
         c.request("POST", path_of(id), "", alice).header("exactly-once-outcome") == "executed" &&
         c.request("GET", path_of(id), "", alice).header("exactly-once-outcome") == "replayed" &&
         c.request("DELETE", path_of(id), "", alice).status == 204;
}

// Full cycles from `workers` clients at once, each of `per_worker` fresh ids from `mint`: the
// ids, and how many cycles did not answer as they should.
template <class Mint>
std::pair<std::vector<std::string>, int> full_cycles_in_parallel(std::uint16_t port, int workers,
                                                                 int per_worker, Mint mint) {
  std::vector<std::string> ids;
  std::mutex ids_mutex;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      http_client c(port);
      for (int i = 0; i < per_worker; ++i) {
        const std::string id = mint();
        {
          std::lock_guard lock(ids_mutex);
          ids.push_back(id);
        }
        if (!full_cycle(c, id))
          ++failures;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  return {std::move(ids), failures.load()};
}

// Polls `pred` every 10 ms until it holds or 5 s pass; returns its last value.
template <class F>
bool eventually(F pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace exactly::test
