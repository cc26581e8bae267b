// The sample servers' operator page options (see operator_page_flags.hpp).
#include "operator_page_flags.hpp"

#include <cstdlib>
#include <fstream>

namespace exactly::samples::keys {

void add_operator_page_options(CLI::App& app, operator_page_flags& flags,
                               server::server_options& so) {
  const std::string group = "Operator page";
  app.add_flag("--operator-page", flags.on,
               "serve the read-only operator page at /_exactly/operator for the key of "
               "--operator-page-key-file or of the environment variable " +
                   std::string(operator_page_variable) +
                   " (the password of HTTP Basic authentication, at least 16 characters, not an "
                   "API key)")
      ->group(group);
  app.add_option("--operator-page-key-file", flags.key_file,
                 "with --operator-page: the page's key is the file's first line")
      ->group(group);
  app.add_option("--operator-page-rows", so.operator_page.max_rows,
                 "rows each table of the operator page shows at most")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str()
      ->group(group);
}

bool apply_operator_page(const operator_page_flags& flags, server::server_options& so,
                         std::string_view program, std::ostream& err) {
  if (!flags.on) {
    if (!flags.key_file.empty()) {
      err << program << ": --operator-page-key-file needs --operator-page\n";
      return false;
    }
    return true;
  }
  std::string key;
  if (!flags.key_file.empty()) {
    std::ifstream in(flags.key_file);
    if (!in || !std::getline(in, key)) {
      err << program << ": cannot read the operator page key file " << flags.key_file << '\n';
      return false;
    }
  } else if (const char* env = std::getenv(operator_page_variable)) {
    key = env;
  }
  while (!key.empty() && (key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (key.empty()) {
    err << program << ": --operator-page needs a key: --operator-page-key-file or the environment "
        << "variable " << operator_page_variable << '\n';
    return false;
  }
  so.operator_page.enabled = true;
  so.operator_page.key = std::move(key);
  return true;
}

}  // namespace exactly::samples::keys
