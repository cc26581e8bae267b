#pragma once
// Reading the operator page's HTML in tests: its sections, row ids and figures, as served or as
// a browser's DOM serializes it.

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace exactly::test {

// The text of <section id="`id`"> ... </section> in `html`, "" when absent.
inline std::string section_of(const std::string& html, const std::string& id) {
  const auto start = html.find("<section id=\"" + id + "\"");
  if (start == std::string::npos)
    return "";
  const auto end = html.find("</section>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Every value of the attribute `name` in `html`, in order.
inline std::vector<std::string> attribute_values(const std::string& html, const std::string& name) {
  std::vector<std::string> out;
  const std::regex re(name + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The number in the cell data-figure="`key`", or nullopt.
inline std::optional<std::int64_t> figure_of(const std::string& html, const std::string& key) {
  const std::regex re("data-figure=\"" + key + "\"[^>]*>\\s*(-?[0-9]+)");
  std::smatch m;
  if (!std::regex_search(html, m, re))
    return std::nullopt;
  return std::stoll(m[1]);
}

// The number of a section's "N more not shown", 0 when it has none.
inline std::int64_t more_of(const std::string& section) {
  const std::regex re("class=\"more-count\">([0-9]+)<");
  std::smatch m;
  return std::regex_search(section, m, re) ? std::stoll(m[1]) : 0;
}

// The total a section's heading shows, or nullopt.
inline std::optional<std::int64_t> total_of(const std::string& section) {
  const std::regex re("class=\"total\">([0-9]+)<");
  std::smatch m;
  if (!std::regex_search(section, m, re))
    return std::nullopt;
  return std::stoll(m[1]);
}

// `bytes` in standard base64, padded.
inline std::string base64(const std::string& bytes) {
  static constexpr char digits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += {digits[v >> 18], digits[(v >> 12) & 63], digits[(v >> 6) & 63], digits[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += {digits[v >> 18], digits[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {digits[v >> 18], digits[(v >> 12) & 63], digits[(v >> 6) & 63], '='};
  }
  return out;
}

}  // namespace exactly::test
