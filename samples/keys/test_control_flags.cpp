// The sample servers' test-control options (see test_control_flags.hpp).
#include "test_control_flags.hpp"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace exactly::samples::keys {

void add_test_control_options(CLI::App& app, test_control_flags& flags) {
  app.add_flag("--test-control", flags.on,
               "FOR TESTS ONLY, never in production: turns on /_exactly/test/ (move the clock, "
               "run the sweeper, count rows; proto-spec section 12) for the key of "
               "--test-control-key-file or of the environment variable " +
                   std::string(test_control_variable) +
                   " (at least 16 characters, not an API key); without this flag the interface is "
                   "off whatever the key");
  app.add_option("--test-control-key-file", flags.key_file,
                 "with --test-control: the test-control key is the file's first line");
}

std::string resolve_test_control_key(const test_control_flags& flags) {
  std::string key;
  if (!flags.on) {
    if (!flags.key_file.empty())
      throw std::invalid_argument(
          "--test-control-key-file needs --test-control (the interface is for tests only)");
    return key;
  }
  if (!flags.key_file.empty()) {
    std::ifstream in(flags.key_file);
    if (!in || !std::getline(in, key))
      throw std::invalid_argument("cannot read the test-control key file " + flags.key_file);
  } else if (const char* env = std::getenv(test_control_variable)) {
    key = env;
  }
  while (!key.empty() && (key.back() == '\r' || key.back() == ' '))
    key.pop_back();
  if (key.empty())
    throw std::invalid_argument(std::string("--test-control needs a key: --test-control-key-file "
                                            "or the environment variable ") +
                                test_control_variable);
  if (key.size() < 16)
    throw std::invalid_argument("the test-control key must have at least 16 characters");
  return key;
}

bool apply_test_control(const test_control_flags& flags, server::server_options& so,
                        server::connector_options& co, std::string_view program,
                        std::ostream& err) {
  try {
    so.test_control.key = resolve_test_control_key(flags);
  } catch (const std::invalid_argument& e) {
    err << program << ": " << e.what() << '\n';
    return false;
  }
  if (so.test_control.key.empty())
    return true;
  for (const server::api_key& k : so.api_keys) {
    if (k.key == so.test_control.key) {
      err << program << ": the test-control key must not be an API key (principal " << k.principal
          << ")\n";
      return false;
    }
  }
  so.test_control.clock = std::make_shared<server::test_clock>();
  co.clock = so.test_control.clock->fn();
  err << program << ": WARNING: the test-control interface is on (/_exactly/test/); never do this "
      << "in production\n";
  return true;
}

}  // namespace exactly::samples::keys
