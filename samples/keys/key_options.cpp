// The sample servers' authentication options (key_options.hpp).
#include "key_options.hpp"

#include "api_keys.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace exactly::samples::keys {
namespace {

std::vector<server::api_key> read_file(const std::string& path, std::ostream& warn) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument("cannot read --api-keys-file " + path + ": " +
                                std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<server::api_key> keys = parse_lines(text.str(), path);
  if (keys.empty())
    throw std::invalid_argument("--api-keys-file " + path + " holds no PRINCIPAL:KEY line");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    warn << "warning: " << path << " is readable by other users; chmod 600 it\n";
  }
  return keys;
}

}  // namespace

void add_key_options(CLI::App& app, key_flags& flags) {
  app.add_option("--api-keys-file", flags.file,
                 "file of accepted API keys, one PRINCIPAL:KEY a line (blank lines and lines "
                 "starting with # skipped); principals are 1-64 of A-Z a-z 0-9 . _ - @, keys "
                 "16-512 printable ASCII characters without spaces. Also read: the environment "
                 "variable " +
                     std::string(environment_variable) +
                     " (PRINCIPAL:KEY entries separated by spaces or newlines)");
  app.add_option("--api-key", flags.entries,
                 "PRINCIPAL:KEY, repeatable; for quick local runs only (other users see it in "
                 "ps): prefer --api-keys-file or " +
                     std::string(environment_variable));
  app.add_flag("--open", flags.open,
               "no authentication, every caller one anonymous principal (local demos only); "
               "required to run without keys");
}

void protect_key_options(CLI::App& app, cli_config::layered_config& layers) {
  if (CLI::Option* o = app.get_option_no_throw("--api-key")) {
    layers.secret(o);
    layers.command_line_only(o);
  }
  if (CLI::Option* o = app.get_option_no_throw("--test-control"))
    layers.command_line_only(o);
}

key_setup resolve_keys(const key_flags& flags, const char* environment, std::ostream& warn) {
  std::vector<server::api_key> keys;
  if (!flags.file.empty())
    keys = read_file(flags.file, warn);
  if (environment != nullptr) {
    for (server::api_key& k : parse_list(environment, environment_variable))
      keys.push_back(std::move(k));
  }
  for (std::size_t i = 0; i < flags.entries.size(); ++i) {
    try {
      keys.push_back(parse_entry(flags.entries[i]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--api-key number " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  if (!flags.entries.empty()) {
    warn << "warning: --api-key puts the key on the command line, where other users of this "
            "machine see it (ps); use --api-keys-file or "
         << environment_variable << " outside quick local runs\n";
  }
  check_distinct(keys);
  if (flags.open) {
    if (!keys.empty()) {
      throw std::invalid_argument(
          "--open runs without authentication and takes no API keys; "
          "give either --open or keys");
    }
    warn << "warning: --open: no authentication, every caller is one anonymous principal\n";
    return {true, {}};
  }
  if (keys.empty()) {
    throw std::invalid_argument(std::string("no API keys: give --api-keys-file PATH or ") +
                                environment_variable +
                                " (PRINCIPAL:KEY entries), or --open to run without "
                                "authentication (local demos only)");
  }
  return {false, std::move(keys)};
}

bool apply_keys(const key_flags& flags, server::server_options& so, std::string_view program,
                std::ostream& err) {
  try {
    key_setup keys = resolve_keys(flags, std::getenv(environment_variable), err);
    so.open_mode = keys.open_mode;
    so.api_keys = std::move(keys.keys);
    return true;
  } catch (const std::invalid_argument& e) {
    err << program << ": " << e.what() << '\n';
    return false;
  }
}

}  // namespace exactly::samples::keys
