#pragma once
// The sample servers' test-control options (proto-spec §12, off by default): the interface is on
// only with the explicit --test-control flag, with its key from --test-control-key-file or the
// EXACTLY_TEST_CONTROL_KEY environment variable (a key alone never turns it on).

#include <exactly/server/http_server.hpp>

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <string_view>

namespace exactly::samples::keys {

// The environment variable holding the test-control key.
inline constexpr const char* test_control_variable = "EXACTLY_TEST_CONTROL_KEY";

struct test_control_flags {
  bool on = false;         // --test-control
  std::string key_file{};  // --test-control-key-file
};

// Registers --test-control and --test-control-key-file on `app`.
void add_test_control_options(CLI::App& app, test_control_flags& flags);

// Without --test-control: "" (the interface stays off, whatever EXACTLY_TEST_CONTROL_KEY holds).
// With it: the key of the file (its first line) or of EXACTLY_TEST_CONTROL_KEY. Throws
// std::invalid_argument for --test-control-key-file without --test-control, --test-control
// without a key, an unreadable file or a key shorter than 16 characters.
std::string resolve_test_control_key(const test_control_flags& flags);

// With --test-control and a key: turns the interface on in `so` with a test clock, which `co.clock`
// then reads, and warns on `err` that it must never run in production. Without --test-control:
// changes nothing. On a refusal (see resolve_test_control_key; the http_server also refuses a key
// that is one of its API keys) prints "<program>: <message>" to `err` and returns false.
bool apply_test_control(const test_control_flags& flags, server::server_options& so,
                        server::connector_options& co, std::string_view program, std::ostream& err);

}  // namespace exactly::samples::keys
