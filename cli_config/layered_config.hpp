#pragma once
// One configuration syntax for every exactly program: each option --NAME can also be given as the
// key NAME in a config file (--config FILE: TOML, or JSON when the name ends in .json) or as the
// environment variable EXACTLY_NAME (upper case, '-' as '_'). A flag beats the environment, the
// environment beats the file, the file beats the default. A subcommand's options are the keys of
// a section named by its path ([client.error] in TOML, nested objects in JSON). --print-config
// prints the effective options as JSON (secrets redacted) and exits.

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::cli_config {

// The environment variable of option `name` ("--max-body-bytes" or "max-body-bytes"):
// EXACTLY_MAX_BODY_BYTES.
std::string env_name(std::string_view name);

// Where an option's value came from.
enum class source { default_value, file, environment, command_line };
std::string_view to_string(source s);

// Reads the environment: the value of a variable, nullopt when unset.
using env_lookup = std::function<std::optional<std::string>(const std::string&)>;
// The process's environment (std::getenv).
env_lookup process_environment();

class layered_config {
 public:
  // Adds --config and --print-config to `app` and makes it capture every option's default; make
  // it before adding the program's options. Options named "postgres" (a libpq connection
  // string, which may hold a password) are secret from the start.
  explicit layered_config(CLI::App& app);

  // `opt` is read from the command line only, never from a file or the environment (e.g. a flag
  // that must be typed on purpose).
  void command_line_only(CLI::Option* opt);
  // `opt` holds a secret: --print-config shows "(secret)" instead of its value.
  void secret(CLI::Option* opt);
  // The same for every option of long name `name` ("yes"), in the program and all its
  // subcommands, whenever they are added.
  void command_line_only(std::string_view name);
  void secret(std::string_view name);

  // Parses argv[1..] with the layers. Returns -1 when the program goes on, else the status it
  // exits with: 0 after --help or --print-config (printed to `out`), 2 after an error (printed to
  // `err` as "<program>: <message>", naming the variable or file key a bad value came from).
  int parse(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            const env_lookup& env = process_environment());
  int parse(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const env_lookup& env);

  // After parse(): where the option of long name `name` ("max-body-bytes") got its value.
  source source_of(std::string_view name) const;
  // After parse(): {"config_file": PATH or null, "options": {NAME: {"value", "source", "env"}}}.
  nlohmann::json effective() const;

 private:
  struct origin {
    source from = source::default_value;
    std::vector<std::string> values;  // as given, for a file, environment or command line value
  };

  CLI::App& app_;
  CLI::Option* config_ = nullptr;
  bool print_ = false;
  std::string config_file_;
  std::set<const CLI::Option*> command_line_only_, secret_;
  std::set<std::string, std::less<>> command_line_only_names_, secret_names_;

  bool only_on_command_line(const CLI::Option* o) const;
  bool is_secret(const CLI::Option* o) const;
  std::map<const CLI::Option*, origin> origins_;
  std::map<const CLI::Option*, std::string> key_of_;  // "name", or "sub.name" in a subcommand
};

}  // namespace exactly::cli_config
