// The operator page's gate and answer (see operator_page.hpp).
#include "operator_page.hpp"

#include "operator_html.hpp"

#include <boost/beast/core/string.hpp>

#include <optional>
#include <stdexcept>

namespace exactly::server {
namespace {

// Whether `given` equals `key`, in time that depends on the key's length only.
bool same_secret(std::string_view given, const std::string& key) {
  unsigned char diff = given.size() == key.size() ? 0 : 1;
  for (std::size_t i = 0; i < key.size(); ++i)
    diff |= static_cast<unsigned char>(key[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

// The value of one base64 digit, or -1.
int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

// The bytes of standard base64 `text` (padding optional), or nullopt when it is not base64.
std::optional<std::string> base64_decoded(std::string_view text) {
  while (!text.empty() && text.back() == '=')
    text.remove_suffix(1);
  if (text.size() % 4 == 1)
    return std::nullopt;
  std::string out;
  unsigned bits = 0;
  int nbits = 0;
  for (const char c : text) {
    const int d = base64_digit(c);
    if (d < 0)
      return std::nullopt;
    bits = (bits << 6) | static_cast<unsigned>(d);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out += static_cast<char>((bits >> nbits) & 0xff);
    }
  }
  return out;
}

// `text` with %XX decoded and '+' as a space (form encoding), or nullopt for a bad escape.
std::optional<std::string> form_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      auto hex = [](char c) {
        if (c >= '0' && c <= '9')
          return c - '0';
        if (c >= 'a' && c <= 'f')
          return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
          return c - 'A' + 10;
        return -1;
      };
      if (i + 2 >= text.size())
        return std::nullopt;
      const int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
      if (hi < 0 || lo < 0)
        return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

http_response text_answer(unsigned status, std::string text) {
  return http_response{status, "text/plain; charset=utf-8", std::move(text) + "\n", {}};
}

}  // namespace

operator_page::operator_page(operator_page_options o, const std::vector<api_key>& api_keys,
                             const std::string& test_control_key)
    : opts_(std::move(o)) {
  if (!opts_.enabled)
    return;
  if (opts_.key.size() < 16)
    throw std::invalid_argument(
        "http_server: the operator-page key must have at least 16 characters");
  for (const api_key& k : api_keys) {
    if (k.key == opts_.key)
      throw std::invalid_argument(
          "http_server: the operator-page key must not be an API key (principal " + k.principal +
          ")");
  }
  if (opts_.key == test_control_key)
    throw std::invalid_argument(
        "http_server: the operator-page key must not be the test-control key");
  if (opts_.max_rows == 0)
    throw std::invalid_argument("http_server: the operator page's max_rows must be at least 1");
}

bool operator_page::handles(std::string_view path) const {
  if (!opts_.enabled || path.substr(0, operator_page_path.size()) != operator_page_path)
    return false;
  return path.size() == operator_page_path.size() || path[operator_page_path.size()] == '/';
}

bool operator_page::authorized(std::string_view authorization) const {
  constexpr std::string_view bearer = "Bearer ", basic = "Basic ";
  if (authorization.size() > bearer.size() &&
      boost::beast::iequals(authorization.substr(0, bearer.size()), bearer))
    return same_secret(authorization.substr(bearer.size()), opts_.key);
  if (authorization.size() > basic.size() &&
      boost::beast::iequals(authorization.substr(0, basic.size()), basic)) {
    const auto credentials = base64_decoded(authorization.substr(basic.size()));
    if (!credentials)
      return false;
    const auto colon = credentials->find(':');
    if (colon == std::string::npos)
      return false;
    return same_secret(std::string_view(*credentials).substr(colon + 1), opts_.key);
  }
  return false;
}

http_response operator_page::answer(std::string_view method, std::string_view path,
                                    std::string_view query, const database& db,
                                    const storage_figures& figures, std::int64_t now_ms,
                                    std::chrono::seconds uptime) const {
  if (path != operator_page_path)
    return text_answer(404, "no operator page at " + std::string(path));
  if (method != "GET") {
    http_response r = text_answer(405, "the operator page is read-only: GET only");
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  auto filter = parse_operator_filter(query);
  if (auto* refusal = std::get_if<std::string>(&filter))
    return text_answer(400, *refusal);
  operator_view view;
  view.figures = figures;
  view.now_ms = now_ms;
  view.uptime = uptime;
  view.max_rows = opts_.max_rows;
  view.filter = std::move(std::get<operator_filter>(filter));
  read_operator_listings(db, figures, view);
  return http_response{200,
                       "text/html; charset=utf-8",
                       render_operator_page(view),
                       {{"Cache-Control", "no-store"},
                        {"X-Content-Type-Options", "nosniff"},
                        {"Referrer-Policy", "no-referrer"},
                        // No script at all, even if a stored text were ever rendered unescaped.
                        {"Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                         "frame-ancestors 'none'"}}};
}

std::variant<operator_filter, std::string> parse_operator_filter(std::string_view query) {
  operator_filter f;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty())
      continue;
    const auto eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const auto value =
        form_decoded(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!value)
      return std::string("a query value has a bad %-escape");
    if (name == "owner") {
      f.owner = *value;
    } else if (name == "state") {
      f.state = inspect::parse_state(*value);
      if (!f.state && !value->empty())
        return std::string("state must be staged, executed or tombstone");
    } else {
      return std::string("the operator page takes only state= and owner=");
    }
  }
  return f;
}

}  // namespace exactly::server
