#pragma once
// The server settings every sample server takes, spelled the same in each: TLS, limits, timeouts,
// background job intervals, metrics, and the connector's timing and quotas (docs/configuration.md).

#include <exactly/server/http_server.hpp>

#include <CLI/CLI.hpp>

namespace exactly::samples::keys {

// Registers the options of `so` and `co` a deployment tunes (not the listen address, the
// database or the keys, which each program adds) with their current values as defaults. A bad
// value (a duration without unit, a size of 0, a malformed certificate entry) fails the parse
// with a message naming the option.
void add_server_options(CLI::App& app, server::server_options& so, server::connector_options& co);

// "PRINCIPAL:SHA256" (64 hex digits, ':' separators allowed) as a client certificate entry.
// Throws std::invalid_argument saying what is wrong.
server::client_certificate parse_client_certificate(std::string_view entry);

}  // namespace exactly::samples::keys
