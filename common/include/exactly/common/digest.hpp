#pragma once
// SHA-256 of a byte string (OpenSSL), for fingerprints of request bodies and certificates.

#include <string>
#include <string_view>

namespace exactly {

// The 32-byte binary digest. Throws std::runtime_error if OpenSSL fails.
std::string sha256(std::string_view data);
// Two lowercase hex digits per byte of `bytes`.
std::string to_hex(std::string_view bytes);

}  // namespace exactly
