#pragma once
// Shared request helpers of the integration and crash tests.

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
