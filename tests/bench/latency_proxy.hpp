#pragma once
// A TCP proxy on loopback that holds every byte for a fixed time each way: PostgreSQL, or the
// server of e2e and the outbox scenarios, as far as a network away (exactly-bench
// --postgres-delay-us, --http-delay-us), where each round trip costs its latency.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace exactly::bench {

class latency_proxy {
 public:
  // Listens on a free loopback port and forwards each connection to 127.0.0.1:`target_port`,
  // each chunk `one_way` later than it arrived, in order, on a thread of its own.
  latency_proxy(int target_port, std::chrono::microseconds one_way);
  ~latency_proxy();
  latency_proxy(const latency_proxy&) = delete;
  latency_proxy& operator=(const latency_proxy&) = delete;

  std::uint16_t port() const;
  // `conninfo` (libpq keywords) with its port=N of the target turned into this proxy's; throws
  // std::invalid_argument if it names no port=N of the target.
  std::string route(const std::string& conninfo) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace exactly::bench
