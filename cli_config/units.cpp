// Durations and sizes on command lines (units.hpp).
#include "units.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <stdexcept>

namespace exactly::cli_config {
namespace {

struct unit {
  std::string_view name;
  std::uint64_t factor;
};

constexpr std::array<unit, 5> duration_units{
    {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1000}, {"ms", 1}}};
constexpr std::array<unit, 4> size_units{
    {{"GiB", 1ULL << 30}, {"MiB", 1ULL << 20}, {"KiB", 1ULL << 10}, {"B", 1}}};

// The leading digits of `text` as a number, the rest in `rest`; nullopt without digits or on
// overflow.
std::optional<std::uint64_t> leading_number(std::string_view text, std::string_view& rest) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data())
    return std::nullopt;
  rest = text.substr(static_cast<std::size_t>(end - text.data()));
  return n;
}

template <std::size_t N>
std::optional<std::uint64_t> scaled(std::string_view text, const std::array<unit, N>& units,
                                    bool bare_allowed) {
  std::string_view rest;
  const auto n = leading_number(text, rest);
  if (!n)
    return std::nullopt;
  if (rest.empty()) {
    if (!bare_allowed && *n != 0)
      return std::nullopt;
    if (*n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw std::invalid_argument("'" + std::string(text) + "' is too large");
    return n;
  }
  for (const unit& u : units) {
    if (rest == u.name) {
      if (*n > std::numeric_limits<std::int64_t>::max() / u.factor)
        throw std::invalid_argument("'" + std::string(text) + "' is too large");
      return *n * u.factor;
    }
  }
  return std::nullopt;
}

template <std::size_t N>
std::string formatted(std::uint64_t v, const std::array<unit, N>& units, std::string_view bare) {
  if (v == 0)
    return "0";
  for (const unit& u : units) {
    if (v % u.factor == 0)
      return std::to_string(v / u.factor) + std::string(u.factor == 1 ? bare : u.name);
  }
  return std::to_string(v);
}

template <class Parse>
void checked(const std::string& name, const std::string& value, Parse parse) {
  try {
    parse(value);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(name, e.what());
  }
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text) {
  const auto ms = scaled(text, duration_units, false);
  if (!ms) {
    throw std::invalid_argument("bad duration '" + std::string(text) +
                                "': expected a whole number and a unit, ms, s, m, h or d (e.g. "
                                "500ms, 15s, 24h)");
  }
  if (*ms > static_cast<std::uint64_t>(max_duration.count()))
    throw std::invalid_argument("'" + std::string(text) + "' is more than 100 years (36500d)");
  return std::chrono::milliseconds(static_cast<std::int64_t>(*ms));
}

std::string format_duration(std::chrono::milliseconds d) {
  return formatted(static_cast<std::uint64_t>(d.count()), duration_units, "ms");
}

std::uint64_t parse_size(std::string_view text) {
  const auto bytes = scaled(text, size_units, true);
  if (!bytes) {
    throw std::invalid_argument("bad size '" + std::string(text) +
                                "': expected a whole number of bytes, optionally with B, KiB, "
                                "MiB or GiB (e.g. 1048576, 64KiB, 1MiB)");
  }
  return *bytes;
}

std::string format_size(std::uint64_t bytes) {
  return formatted(bytes, size_units, "");
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& target,
                          const std::string& help, zero z) {
  CLI::Option* o = app.add_option_function<std::string>(
      name,
      [&target, name, z](const std::string& value) {
        checked(name, value, [&](const std::string& v) {
          const auto d = parse_duration(v);
          if (d.count() == 0 && z == zero::refused)
            throw std::invalid_argument("must be more than 0");
          target = d;
        });
      },
      help + " (a duration: 500ms, 15s, 2m, 24h, 7d)");
  o->type_name("DURATION")->default_str(format_duration(target));
  return o;
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::int64_t& target_ms,
                          const std::string& help, zero z) {
  CLI::Option* o = app.add_option_function<std::string>(
      name,
      [&target_ms, name, z](const std::string& value) {
        checked(name, value, [&](const std::string& v) {
          const auto d = parse_duration(v);
          if (d.count() == 0 && z == zero::refused)
            throw std::invalid_argument("must be more than 0");
          target_ms = d.count();
        });
      },
      help + " (a duration: 500ms, 15s, 2m, 24h, 7d)");
  o->type_name("DURATION")->default_str(format_duration(std::chrono::milliseconds(target_ms)));
  return o;
}

namespace {

// add_size() for either integer type: a size of at least 1 byte into `target`.
template <class Int>
CLI::Option* add_size_option(CLI::App& app, const std::string& name, Int& target,
                             const std::string& help) {
  CLI::Option* o = app.add_option_function<std::string>(
      name,
      [&target, name](const std::string& value) {
        checked(name, value, [&](const std::string& v) {
          const std::uint64_t bytes = parse_size(v);
          if (bytes == 0)
            throw std::invalid_argument("must be at least 1 byte");
          target = static_cast<Int>(bytes);
        });
      },
      help + " (bytes, or with KiB, MiB, GiB)");
  o->type_name("SIZE")->default_str(format_size(static_cast<std::uint64_t>(target)));
  return o;
}

}  // namespace

CLI::Option* add_size(CLI::App& app, const std::string& name, std::size_t& target,
                      const std::string& help) {
  return add_size_option(app, name, target, help);
}

CLI::Option* add_size(CLI::App& app, const std::string& name, std::int64_t& target,
                      const std::string& help) {
  return add_size_option(app, name, target, help);
}

}  // namespace exactly::cli_config
