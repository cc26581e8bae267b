// Flags, environment variables and a config file with one syntax (layered_config.hpp).
#include "layered_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace exactly::cli_config {
namespace {

constexpr std::string_view prefix = "EXACTLY_";

// An option's long name without dashes ("max-body-bytes"), "" when it has none.
std::string long_name(const CLI::Option* o) {
  const auto& names = o->get_lnames();
  return names.empty() ? std::string() : names.front();
}

bool takes_several(const CLI::Option* o) {
  return o->get_items_expected_max() > 1;
}

std::string json_scalar(const nlohmann::json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number())
    return v.dump();
  throw std::invalid_argument("values must be strings, numbers, booleans or arrays of them");
}

// The file's keys: "name" at the top, "section.name" inside a section (a subcommand's options).
std::map<std::string, std::vector<std::string>> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument("cannot read config file " + path);
  std::map<std::string, std::vector<std::string>> keys;
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (json) {
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    if (!doc.is_object())
      throw std::invalid_argument("config file " + path + ": expected one JSON object");
    const std::function<void(const nlohmann::json&, const std::string&)> add =
        [&](const nlohmann::json& object, const std::string& section) {
          for (const auto& [name, v] : object.items()) {
            const std::string key = section.empty() ? name : section + "." + name;
            try {
              if (v.is_object()) {
                add(v, key);
              } else if (v.is_array()) {
                std::vector<std::string>& values = keys[key];
                for (const auto& e : v)
                  values.push_back(json_scalar(e));
              } else {
                keys[key] = {json_scalar(v)};
              }
            } catch (const std::invalid_argument& e) {
              throw std::invalid_argument("config file " + path + ", key " + key + ": " + e.what());
            }
          }
        };
    add(doc, "");
    return keys;
  }
  try {
    for (const CLI::ConfigItem& item : CLI::ConfigTOML().from_config(in)) {
      if (item.name == "++" || item.name == "--")  // CLI11's markers of entering a section
        continue;
      keys[item.fullname()] = item.inputs;
    }
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument("config file " + path + ": " + e.what());
  }
  return keys;
}

// "--name" and "--name=value" of `token` as the option's name, or "" for a value.
std::string flag_of(const std::string& token) {
  if (token.size() > 2 && token.starts_with("--"))
    return token.substr(0, token.find('='));
  if (token.size() == 2 && token[0] == '-' && token[1] != '-')
    return token;
  return {};
}

}  // namespace

std::string env_name(std::string_view name) {
  while (name.starts_with('-'))
    name.remove_prefix(1);
  std::string out(prefix);
  for (const char c : name)
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view to_string(source s) {
  switch (s) {
    case source::default_value:
      return "default";
    case source::file:
      return "file";
    case source::environment:
      return "environment";
    case source::command_line:
      return "command line";
  }
  return "default";
}

env_lookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr)
      return std::nullopt;
    return std::string(v);
  };
}

layered_config::layered_config(CLI::App& app) : app_(app) {
  app_.option_defaults()->always_capture_default();
  config_ = app_.add_option("--config", config_file_,
                            "read options from this file: NAME = VALUE lines (TOML) for --NAME, "
                            "or a JSON object when the name ends in .json");
  app_.add_flag("--print-config", print_,
                "print the effective options as JSON (secrets hidden) and exit");
  command_line_only(app_.get_option("--print-config"));
  // Every program names its libpq connection string --postgres, and one may hold a password.
  secret("postgres");
  app_.footer(
      "Every option --NAME is also the key NAME of the --config file and the environment "
      "variable EXACTLY_NAME (upper case, '-' as '_'; a list option's values separated by "
      "spaces). A flag beats the environment, the environment beats the file, the file beats "
      "the default.");
}

void layered_config::command_line_only(CLI::Option* opt) {
  command_line_only_.insert(opt);
}

void layered_config::secret(CLI::Option* opt) {
  secret_.insert(opt);
}

void layered_config::command_line_only(std::string_view name) {
  command_line_only_names_.emplace(name);
}

void layered_config::secret(std::string_view name) {
  secret_names_.emplace(name);
}

bool layered_config::only_on_command_line(const CLI::Option* o) const {
  return command_line_only_.contains(o) || command_line_only_names_.contains(long_name(o));
}

bool layered_config::is_secret(const CLI::Option* o) const {
  return secret_.contains(o) || secret_names_.contains(long_name(o));
}

int layered_config::parse(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                          const env_lookup& env) {
  return parse(std::vector<std::string>(argv, argv + argc), out, err, env);
}

int layered_config::parse(const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err, const env_lookup& env) {
  std::string program = args.empty() ? "program" : args.front();
  program = program.substr(program.rfind('/') + 1);
  if (app_.get_name().empty())
    app_.name(program);
  origins_.clear();
  key_of_.clear();

  // What the command line names: its options, and where each subcommand's own options start.
  std::set<const CLI::Option*> given;
  std::vector<std::pair<CLI::App*, std::size_t>> levels{{&app_, 1}};
  std::optional<std::string> config_path;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (token == "--")
      break;
    CLI::App* level = levels.back().first;
    const std::string flag = flag_of(token);
    if (flag.empty()) {
      for (CLI::App* sub : level->get_subcommands([](CLI::App*) { return true; })) {
        if (sub->check_name(token)) {
          levels.emplace_back(sub, i + 1);
          break;
        }
      }
      continue;
    }
    const CLI::Option* o = nullptr;
    for (auto l = levels.rbegin(); o == nullptr && l != levels.rend(); ++l)
      o = l->first->get_option_no_throw(flag);
    if (o != nullptr) {
      given.insert(o);
      if (o == config_) {
        const auto eq = token.find('=');
        if (eq != std::string::npos)
          config_path = token.substr(eq + 1);
        else if (i + 1 < args.size())
          config_path = args[i + 1];
      }
    }
  }

  std::vector<std::string> argv_out;  // the command line with the lower layers put in front
  try {
    if (!config_path)
      config_path = env(env_name("config"));
    if (config_path && config_path->empty())
      config_path.reset();
    config_file_ = config_path.value_or("");
    std::map<std::string, std::vector<std::string>> file;
    if (config_path)
      file = read_file(*config_path);

    std::vector<std::vector<std::string>> inserted(levels.size());
    std::set<std::string> used_keys;
    std::string section;  // "" at the top, "sub." or "sub.subsub." below
    for (std::size_t l = 0; l < levels.size(); ++l) {
      CLI::App* level = levels[l].first;
      if (l > 0)
        section += level->get_name() + ".";
      for (CLI::Option* o : level->get_options([](const CLI::Option*) { return true; })) {
        const std::string name = long_name(o);
        if (name.empty() || name == "help")
          continue;
        const std::string key = section + name;
        key_of_[o] = key;
        origin& at = origins_[o];
        const bool lower_layers = !only_on_command_line(o) && o != config_;
        if (lower_layers && file.contains(key))
          used_keys.insert(key);
        if (given.contains(o)) {
          at.from = source::command_line;
          continue;
        }
        if (!lower_layers)
          continue;
        if (auto v = env(env_name(name)); v && !v->empty()) {
          at.from = source::environment;
          if (takes_several(o)) {
            std::istringstream words(*v);
            for (std::string w; words >> w;)
              at.values.push_back(w);
          } else {
            at.values.push_back(*v);
          }
        } else if (auto f = file.find(key); f != file.end()) {
          at.from = source::file;
          at.values = f->second;
        }
        for (const std::string& v : at.values)
          inserted[l].push_back("--" + name + "=" + v);
      }
    }
    for (const auto& [key, values] : file) {
      if (used_keys.contains(key))
        continue;
      // A key of a subcommand that does not run now is fine, if that subcommand has the option.
      const auto dot = key.rfind('.');
      CLI::App* owner = &app_;
      for (std::size_t at = 0; dot != std::string::npos && owner != nullptr && at < dot;) {
        const std::size_t end = std::min(key.find('.', at), dot);
        const std::string part = key.substr(at, end - at);
        CLI::App* found = nullptr;
        for (CLI::App* sub : owner->get_subcommands([](CLI::App*) { return true; })) {
          if (sub->get_name() == part)
            found = sub;
        }
        owner = found;
        at = end + 1;
      }
      const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
      const CLI::Option* o = owner == nullptr ? nullptr : owner->get_option_no_throw("--" + name);
      const bool running = std::any_of(levels.begin(), levels.end(),
                                       [owner](const auto& l) { return l.first == owner; });
      if (o != nullptr && !running)
        continue;
      throw std::invalid_argument(
          "config file " + *config_path + ": " +
          (o != nullptr ? "key " + key + " may only be given on the command line"
                        : "unknown key " + key + " (keys are the long options without --)"));
    }
    argv_out.push_back(args.empty() ? program : args.front());
    std::size_t next = 1;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      for (; next < levels[l].second && next < args.size(); ++next)
        argv_out.push_back(args[next]);
      argv_out.insert(argv_out.end(), inserted[l].begin(), inserted[l].end());
    }
    for (; next < args.size(); ++next)
      argv_out.push_back(args[next]);
  } catch (const std::invalid_argument& e) {
    err << program << ": " << e.what() << '\n';
    return 2;
  }

  try {
    std::vector<std::string> reversed(argv_out.rbegin(), argv_out.rend() - 1);
    app_.parse(std::move(reversed));
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    for (const auto& [o, at] : origins_) {
      const std::string name = long_name(o);
      if (message.find("--" + name) == std::string::npos)
        continue;
      if (at.from == source::environment)
        message += " (the value comes from the environment variable " + env_name(name) + ")";
      else if (at.from == source::file)
        message += " (the value comes from key " + name + " of " + config_file_ + ")";
    }
    err << program << ": " << message << '\n';
    return 2;
  }
  for (auto& [o, at] : origins_) {
    if (at.from == source::command_line)
      at.values = o->results();
  }
  if (print_) {
    out << effective().dump(2) << '\n';
    return 0;
  }
  return -1;
}

source layered_config::source_of(std::string_view name) const {
  for (const auto& [o, at] : origins_) {
    if (long_name(o) == name)
      return at.from;
  }
  throw std::invalid_argument("no option --" + std::string(name));
}

nlohmann::json layered_config::effective() const {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [o, at] : origins_) {
    const std::string name = long_name(o);
    if (o == config_ || name == "print-config")
      continue;
    nlohmann::json value;
    if (is_secret(o)) {
      value = at.values.empty() && at.from == source::default_value ? nlohmann::json()
                                                                    : nlohmann::json("(secret)");
    } else if (at.from == source::default_value) {
      value = o->get_default_str();
      if (o->get_expected_max() == 0 && value == "")  // a flag not given
        value = "false";
    } else if (takes_several(o)) {
      value = at.values;
    } else {
      value = at.values.empty() ? std::string() : at.values.back();
    }
    const std::string& key = key_of_.at(o);
    options[key] = {{"value", value}, {"source", to_string(at.from)}};
    if (!only_on_command_line(o))
      options[key]["env"] = env_name(name);
  }
  return {{"config_file", config_file_.empty() ? nlohmann::json() : nlohmann::json(config_file_)},
          {"options", options}};
}

}  // namespace exactly::cli_config
