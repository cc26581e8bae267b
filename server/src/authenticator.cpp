// Authentication: API keys and client certificate fingerprints to principals (authenticator.hpp).
#include "authenticator.hpp"

#include "tls_context.hpp"

#include <boost/beast/core/string.hpp>

#include <stdexcept>

namespace exactly::server {

authenticator::authenticator(const server_options& opts) : open_mode_(opts.open_mode) {
  if (!opts.open_mode && opts.api_keys.empty() && opts.tls.client_certificates.empty()) {
    throw std::invalid_argument(
        "http_server: configure api_keys or tls.client_certificates, or set open_mode "
        "explicitly for an unauthenticated server");
  }
  for (const api_key& k : opts.api_keys)
    by_key_[k.key] = k.principal;
  const tls_options& t = opts.tls;
  if (!t.client_certificates.empty() && t.client_ca_file.empty())
    throw std::invalid_argument("http_server: tls.client_certificates need tls.client_ca_file");
  for (const client_certificate& cc : t.client_certificates)
    by_certificate_[normalized_sha256(cc.sha256_hex)] = cc.principal;
}

std::optional<std::string> authenticator::principal_of(
    std::string_view authorization, const std::string& certificate_sha256) const {
  if (!certificate_sha256.empty()) {
    if (const auto it = by_certificate_.find(certificate_sha256); it != by_certificate_.end())
      return it->second;
  }
  if (open_mode_)
    return std::string();
  constexpr std::string_view scheme = "Bearer ";
  if (authorization.size() <= scheme.size() ||
      !boost::beast::iequals(authorization.substr(0, scheme.size()), scheme)) {
    return std::nullopt;
  }
  const auto it = by_key_.find(authorization.substr(scheme.size()));
  if (it == by_key_.end())
    return std::nullopt;
  return it->second;
}

}  // namespace exactly::server
