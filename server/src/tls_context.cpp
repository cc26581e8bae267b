// The server's TLS context and certificate fingerprints (see tls_context.hpp).
#include "tls_context.hpp"

#include <exactly/common/digest.hpp>

#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cctype>
#include <stdexcept>

namespace exactly::server {

using namespace exactly::net;

std::unique_ptr<ssl::context> make_tls_context(const tls_options& o) {
  if (o.certificate_chain_file.empty()) {
    if (!o.private_key_file.empty() || !o.client_ca_file.empty())
      throw std::invalid_argument("http_server: TLS settings need tls.certificate_chain_file");
    return nullptr;
  }
  if (o.private_key_file.empty())
    throw std::invalid_argument("http_server: tls.private_key_file is required with a certificate");
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  try {
    ctx->use_certificate_chain_file(o.certificate_chain_file);
    ctx->use_private_key_file(o.private_key_file, ssl::context::pem);
    if (!o.client_ca_file.empty()) {
      ctx->load_verify_file(o.client_ca_file);
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      // Without a session id context, OpenSSL fails the handshake of a client that resumes a
      // session when client certificates are verified, instead of starting a fresh one.
      static constexpr unsigned char context[] = "exactly";
      SSL_CTX_set_session_id_context(ctx->native_handle(), context, sizeof context - 1);
    }
  } catch (const boost::system::system_error& e) {
    throw std::invalid_argument(std::string("http_server: TLS files: ") + e.what());
  }
  return ctx;
}

std::string normalized_sha256(std::string_view text) {
  std::string hex;
  for (const char c : text) {
    if (c == ':')
      continue;
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      throw std::invalid_argument("client certificate fingerprint: not hex: " + std::string(text));
    hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (hex.size() != 64)
    throw std::invalid_argument("client certificate fingerprint: not 32 bytes: " +
                                std::string(text));
  return hex;
}

std::string peer_certificate_sha256(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert)
    return {};
  unsigned char* der = nullptr;
  const int len = i2d_X509(cert, &der);
  X509_free(cert);
  if (len <= 0)
    return {};
  std::string hex =
      to_hex(sha256({reinterpret_cast<const char*>(der), static_cast<std::size_t>(len)}));
  OPENSSL_free(der);
  return hex;
}

}  // namespace exactly::server
