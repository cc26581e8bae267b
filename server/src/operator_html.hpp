#pragma once
// The operator page as HTML: server-rendered, a little CSS, no script; every stored text escaped.

#include "operator_view.hpp"

#include <string>
#include <string_view>

namespace exactly::server {

// `text` with & < > " ' replaced by character references: safe in element content and in
// quoted attribute values.
std::string html_escaped(std::string_view text);
// `text` percent-encoded for a query string value (unreserved characters kept).
std::string query_encoded(std::string_view text);
// The whole page.
std::string render_operator_page(const operator_view& v);

}  // namespace exactly::server
