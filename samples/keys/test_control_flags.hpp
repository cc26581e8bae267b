#pragma once
// The sample servers' test-control options (proto-spec §12, off by default):
// --test-control-key-file and the EXACTLY_TEST_CONTROL_KEY environment variable.

#include <exactly/server/http_server.hpp>

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <string_view>

namespace exactly::samples::keys {

// The environment variable holding the test-control key.
inline constexpr const char* test_control_variable = "EXACTLY_TEST_CONTROL_KEY";

struct test_control_flags {
  std::string key_file{};  // --test-control-key-file
};

// Registers --test-control-key-file on `app`.
void add_test_control_options(CLI::App& app, test_control_flags& flags);

// The key of the file (its first line) or of EXACTLY_TEST_CONTROL_KEY; "" when neither is given
// (the interface stays off). Throws std::invalid_argument for an unreadable file or a key shorter
// than 16 characters.
std::string resolve_test_control_key(const test_control_flags& flags);

// With a key: turns the interface on in `so` with a test clock, which `co.clock` then reads, and
// warns on `warn` that it must never run in production. Without: changes nothing. On a refusal
// prints "<program>: <message>" to `err` and returns false.
bool apply_test_control(const test_control_flags& flags, server::server_options& so,
                        server::connector_options& co, std::string_view program, std::ostream& err);

}  // namespace exactly::samples::keys
