#include "certificates.hpp"

#include <exactly/common/digest.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace exactly::test {

void make_certificate(const std::string& san, const std::string& cert_path,
                      const std::string& key_path) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  // Named after `san`, so that certificates in one CA file do not share a subject.
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(san.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, san},
                                   std::pair{NID_basic_constraints, std::string("CA:TRUE")}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(x, key, EVP_sha256());
  FILE* c = std::fopen(cert_path.c_str(), "w");
  PEM_write_X509(c, x);
  std::fclose(c);
  FILE* k = std::fopen(key_path.c_str(), "w");
  PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(key);
}

std::string certificate_sha256(const std::string& cert_path) {
  FILE* f = std::fopen(cert_path.c_str(), "r");
  if (!f)
    throw std::runtime_error("cannot open " + cert_path);
  X509* x = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (!x)
    throw std::runtime_error("no certificate in " + cert_path);
  unsigned char* der = nullptr;
  const int len = i2d_X509(x, &der);
  X509_free(x);
  if (len <= 0)
    throw std::runtime_error("cannot encode the certificate in " + cert_path);
  std::string hex =
      to_hex(sha256({reinterpret_cast<const char*>(der), static_cast<std::size_t>(len)}));
  OPENSSL_free(der);
  // Upper case, as `openssl x509 -fingerprint` prints it: the server takes either.
  for (char& c : hex)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return hex;
}

}  // namespace exactly::test
