#pragma once
// A message between endpoints: id, type, headers and a JSON body; and a message in an error queue.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace exactly::client {

struct message {
  std::string id{};    // unique per message; minted by send() when empty
  std::string type{};  // selects the handler
  nlohmann::json headers = nlohmann::json::object();
  nlohmann::json body{};
};

// A message that went to its endpoint's error queue.
struct error_entry {
  std::int64_t seq = 0;  // names the entry, e.g. for endpoint::requeue_error
  std::string endpoint;
  message msg;
  int attempts = 0;
  std::string error;  // the last failure (exception text or protocol problem)
  std::int64_t failed_ms = 0;
};

}  // namespace exactly::client
