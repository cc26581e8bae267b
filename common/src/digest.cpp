// SHA-256 and lowercase hex.
#include <exactly/common/digest.hpp>

#include <openssl/evp.h>

#include <stdexcept>

namespace exactly {

std::string sha256(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256 failed");
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    hex += digits[b >> 4];
    hex += digits[b & 0xf];
  }
  return hex;
}

}  // namespace exactly
