#pragma once
// The server's TLS: its context from tls_options, and certificate fingerprints (SHA-256 of DER).

#include <exactly/server/http_server.hpp>

#include "asio_beast.hpp"

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace exactly::server {

// The TLS context for `o`, or null for plain http (no certificate chain). Throws
// std::invalid_argument when the settings are incomplete or a file does not load.
std::unique_ptr<net::ssl::context> make_tls_context(const tls_options& o);

// "AB:cd:..." or "abcd..." as 64 lowercase hex digits; throws std::invalid_argument otherwise.
std::string normalized_sha256(std::string_view text);

// The SHA-256 of the DER encoding of the peer's certificate on `ssl`, as 64 lowercase hex
// digits; "" when it sent none.
std::string peer_certificate_sha256(SSL* ssl);

}  // namespace exactly::server
