#pragma once
// A message between endpoints: id, type, headers and a JSON body.

#include <nlohmann/json.hpp>

#include <string>

namespace exactly::client {

struct message {
  std::string id{};    // unique per message; minted by send() when empty
  std::string type{};  // selects the handler
  nlohmann::json headers = nlohmann::json::object();
  nlohmann::json body{};
};

}  // namespace exactly::client
