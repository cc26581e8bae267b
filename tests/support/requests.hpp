#pragma once
// Shared request helpers of the integration and crash tests.

#include "http_client.hpp"

#include <chrono>
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
