#pragma once
// An HTTP fault-injecting proxy for testing exactly-once integrations: between a client and a
// server it drops requests, drops responses after the server handled them, resets connections,
// delays, and duplicates requests, each by a configurable probability. One request at a time per
// client connection; each client connection gets its own upstream connection, to the upstream
// servers in turn (one that refuses the connection is skipped for the next).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exactly::tools {

struct fault_options {
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 0;  // 0 = any free port
  std::string upstream_host = "127.0.0.1";
  std::uint16_t upstream_port = 0;
  // Further servers behind the same proxy (instances of one service), as (host, port).
  std::vector<std::pair<std::string, std::uint16_t>> more_upstreams{};
  double drop_request = 0;   // close the client connection without forwarding
  double drop_response = 0;  // forward, let the server answer, close before the client sees it
  double reset = 0;          // forward, then reset the client connection (RST) instead of answering
  double delay = 0;          // hold the request for delay_ms before forwarding
  int delay_ms = 200;
  double duplicate = 0;    // forward the request twice; the client gets the second answer
  std::uint64_t seed = 1;  // for repeatable fault sequences
};

struct fault_counts {
  std::uint64_t requests = 0, dropped_requests = 0, dropped_responses = 0, resets = 0, delays = 0,
                duplicates = 0;
};

class fault_proxy {
 public:
  explicit fault_proxy(fault_options opts);
  ~fault_proxy();  // stops
  // Binds and starts serving on a thread of its own; returns the bound port.
  std::uint16_t start();
  void stop();
  fault_counts counts() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace exactly::tools
