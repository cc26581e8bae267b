#pragma once
// What the runtime lends a running handler through its handler_context.

#include "attempt_puts.hpp"
#include "endpoint_core.hpp"

#include <cstdint>

namespace exactly::client::detail {

struct handler_scope {
  endpoint_core& core;
  attempt_puts& puts;  // the PUTs of the batch's handler attempts
  std::int64_t now_ms;
  const message& incoming;
  const http_result* response;  // a follow-up's stored response, else nullptr
};

}  // namespace exactly::client::detail
