#pragma once
// What the client has recorded of one invoke_http that is not finished yet.

#include <cstdint>
#include <optional>
#include <string>

namespace exactly::client {

struct invocation_info {
  std::string request_id{};
  std::string url{};
  std::string state{};  // "post_pending", "restage_pending", "awaiting_follow_up", "delete_pending"
  int attempts = 0;     // failed sends of the step in progress
  std::string last_error{};
  // Unix ms until which the server keeps the staged request for its POST (the PUT answer's
  // Exactly-Once-Retention); nullopt when the answer did not say or the id is only being DELETEd.
  std::optional<std::int64_t> staged_until_ms{};
  // Unix ms until which the server keeps the stored response for GETs (the POST answer's
  // Exactly-Once-Retention); nullopt before the POST's answer or when it did not say.
  std::optional<std::int64_t> response_until_ms{};
};

}  // namespace exactly::client
