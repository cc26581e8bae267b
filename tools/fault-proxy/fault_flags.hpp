#pragma once
// The fault flags of the fault-proxy command line, shared with the programs that start it, so
// that both spell and describe them the same way.

#include "fault_proxy.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace exactly::tools {

// Adds --drop-request, --drop-response, --reset, --delay, --delay-ms and --duplicate to `app`.
inline void add_fault_flags(CLI::App& app, fault_options& o) {
  app.add_option("--drop-request", o.drop_request, "probability of not forwarding a request");
  app.add_option("--drop-response", o.drop_response,
                 "probability of forwarding a request and dropping its response");
  app.add_option("--reset", o.reset, "probability of forwarding then resetting the connection");
  app.add_option("--delay", o.delay, "probability of delaying a request by --delay-ms");
  app.add_option("--delay-ms", o.delay_ms, "delay length");
  app.add_option("--duplicate", o.duplicate, "probability of forwarding a request twice");
}

// The same flags with the values of `o`, for a fault-proxy command line.
inline std::vector<std::string> fault_flag_args(const fault_options& o) {
  return {"--drop-request",  std::to_string(o.drop_request),
          "--drop-response", std::to_string(o.drop_response),
          "--reset",         std::to_string(o.reset),
          "--delay",         std::to_string(o.delay),
          "--delay-ms",      std::to_string(o.delay_ms),
          "--duplicate",     std::to_string(o.duplicate)};
}

}  // namespace exactly::tools
