#pragma once
// The sample servers' operator page options (docs/operator-page.md, off by default): the page is
// on with --operator-page, its key from --operator-page-key-file or the EXACTLY_OPERATOR_PAGE_KEY
// environment variable.

#include <exactly/server/http_server.hpp>

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <string_view>

namespace exactly::samples::keys {

// The environment variable holding the operator page's key.
inline constexpr const char* operator_page_variable = "EXACTLY_OPERATOR_PAGE_KEY";

struct operator_page_flags {
  bool on = false;         // --operator-page
  std::string key_file{};  // --operator-page-key-file
};

// Registers --operator-page, --operator-page-key-file and --operator-page-rows (into `so`).
void add_operator_page_options(CLI::App& app, operator_page_flags& flags,
                               server::server_options& so);

// Without --operator-page: changes nothing (a key file alone is refused). With it: turns the page
// on in `so` with the key of the file (its first line) or of EXACTLY_OPERATOR_PAGE_KEY. On a
// refusal (no key, an unreadable file; the http_server refuses a short key or one that is an API
// key) prints "<program>: <message>" to `err` and returns false.
bool apply_operator_page(const operator_page_flags& flags, server::server_options& so,
                         std::string_view program, std::ostream& err);

}  // namespace exactly::samples::keys
