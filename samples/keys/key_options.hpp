#pragma once
// The sample servers' authentication options, the same for each: --api-keys-file, the
// EXACTLY_API_KEYS environment variable, --api-key (quick local runs) and --open.

#include <exactly/server/http_server.hpp>

#include <CLI/CLI.hpp>
#include <layered_config.hpp>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::samples::keys {

// The environment variable holding PRINCIPAL:KEY entries separated by whitespace.
inline constexpr const char* environment_variable = "EXACTLY_API_KEYS";

// What the command line said.
struct key_flags {
  std::vector<std::string> entries{};  // --api-key, repeatable
  std::string file{};                  // --api-keys-file
  bool open = false;                   // --open
};

// Registers --api-keys-file, --api-key and --open on `app`, their help saying the format.
void add_key_options(CLI::App& app, key_flags& flags);

// Marks what add_key_options() and add_test_control_options() registered on `app` for `layers`:
// --api-key is secret and read from the command line only (EXACTLY_API_KEYS is its variable),
// --test-control from the command line only (turning it on must be typed on purpose).
void protect_key_options(CLI::App& app, cli_config::layered_config& layers);

// The server's authentication settings.
struct key_setup {
  bool open_mode = false;
  std::vector<server::api_key> keys;
};

// Reads the keys of the file, of `environment` (the value of EXACTLY_API_KEYS, nullptr when
// unset) and of the command line, all together. Warnings (a key on the command line, a keys file
// other users can read, open mode) go to `warn`. Throws std::invalid_argument with a message for
// the operator: a bad entry (by file line or list position), an unreadable or empty file, a key
// given twice, no keys without --open, or --open with keys.
key_setup resolve_keys(const key_flags& flags, const char* environment, std::ostream& warn);

// resolve_keys() with the process's EXACTLY_API_KEYS, into `so`; on a refusal prints
// "<program>: <message>" to `err` and returns false (the caller exits with status 2).
bool apply_keys(const key_flags& flags, server::server_options& so, std::string_view program,
                std::ostream& err);

}  // namespace exactly::samples::keys
