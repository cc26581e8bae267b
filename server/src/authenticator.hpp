#pragma once
// Authentication: API keys and client certificate fingerprints name principals; else 401.

#include <exactly/server/http_server.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace exactly::server {

class authenticator {
 public:
  // Throws std::invalid_argument if authentication is neither configured nor explicitly open,
  // if client certificates come without a client CA, or for a malformed fingerprint.
  explicit authenticator(const server_options& opts);

  // The principal of a request: the connection's client certificate (`certificate_sha256`, ""
  // when none) when it names one, else the key of `authorization` ("Bearer <key>"), else "" in
  // open mode; nullopt means 401.
  std::optional<std::string> principal_of(std::string_view authorization,
                                          const std::string& certificate_sha256) const;

 private:
  bool open_mode_;
  std::map<std::string, std::string, std::less<>> by_key_;  // API key -> principal
  std::map<std::string, std::string> by_certificate_;       // SHA-256 hex -> principal
};

}  // namespace exactly::server
