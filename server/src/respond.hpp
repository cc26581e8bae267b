#pragma once
// The one place that turns an outcome into an answer: an errc into a problem response, a caught
// exception into 503 / 500, and a response value into the Beast response sent.

#include <exactly/common/error.hpp>
#include <exactly/server/connector_types.hpp>
#include <exactly/server/http_message.hpp>

#include "asio_beast.hpp"

#include <exception>
#include <string>
#include <string_view>

namespace exactly::server {

using beast_request = net::http::request<net::http::string_body>;
using beast_response = net::http::response<net::http::string_body>;

// The problem answer for `e` with `detail` (application/problem+json, no outcome).
interaction_response problem_response(errc e, std::string detail);
// The problem answer for `e` with its standard detail.
interaction_response problem_response(errc e);
// The answer to the exception `e` caught at a boundary, logged with `context`: 503
// storage-unavailable for a storage failure (storage_error::storage_failure()), else `otherwise`
// with `detail` (the standard detail of `otherwise` when empty).
interaction_response failure_response(std::exception_ptr e, errc otherwise,
                                      std::string_view context, std::string detail = {});
// The Beast response of a protocol answer: status, Content-Type, body, outcome and retention
// headers.
beast_response to_beast(interaction_response r, unsigned version);
// The Beast response of a user route's answer, with its extra headers.
beast_response to_beast(http_response r, unsigned version);

}  // namespace exactly::server
