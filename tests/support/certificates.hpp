#pragma once
// Certificates for TLS tests, made with OpenSSL: self-signed, valid for an hour, usable as their
// own CA.

#include <string>

namespace exactly::test {

// Writes a self-signed certificate for `san` (e.g. "IP:127.0.0.1"), also its subject's CN, and its
// key as PEM files.
void make_certificate(const std::string& san, const std::string& cert_path,
                      const std::string& key_path);
// The SHA-256 of the DER encoding of the first certificate in the PEM file, as 64 hex digits.
std::string certificate_sha256(const std::string& cert_path);

}  // namespace exactly::test
