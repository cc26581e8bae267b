#pragma once
// The response a route's business logic produces, stored and replayed verbatim.

#include <string>

namespace exactly::server {

struct stored_response {
  unsigned status = 200;     // any HTTP status; 4xx/5xx are business outcomes, not errors
  std::string content_type;  // replayed as Content-Type (omitted when empty)
  std::string body;
};

}  // namespace exactly::server
