#include "tls/server_identity.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/errors.h"
#include "tls/openssl_errors.h"
#include "tls/openssl_handles.h"
#include "tls/tds_names.h"

namespace mssql_cdc::tls {
namespace {

BioHandle OpenFile(const std::string& path, const char* what) {
  errno = 0;
  BioHandle bio(BIO_new_file(path.c_str(), "r"));
  if (bio == nullptr) {
    ERR_clear_error();
    throw ConfigError(std::string("cannot read the TLS ") + what + " file " + path + ": " +
                      (errno != 0 ? std::strerror(errno) : "it cannot be opened"));
  }
  return bio;
}

std::string TimeText(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return "an unreadable date";
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::chrono::system_clock::time_point TimePoint(const ASN1_TIME* time) {
  std::tm tm{};
  ASN1_TIME_to_tm(time, &tm);
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string Subject(X509* certificate) {
  BioHandle out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253);
  return MemoryBioText(out.get());
}

// Chooses "tds/8.0" when the client offers it; a strict client without ALPN is served too.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* out_length,
               const unsigned char* offered, unsigned int offered_length, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_length, kAlpnTds8, sizeof(kAlpnTds8), offered,
                            offered_length) == OPENSSL_NPN_NEGOTIATED) {
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

SSL_CTX* NewContext(const std::string& certificate_file, EVP_PKEY* key, int max_version) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) throw InternalError(TakeOpenSslErrors("SSL_CTX_new failed"));
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  if (max_version != 0) SSL_CTX_set_max_proto_version(context, max_version);
  if (SSL_CTX_use_certificate_chain_file(context, certificate_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey(context, key) != 1) {
    SSL_CTX_free(context);
    throw ConfigError("cannot use the TLS certificate " + certificate_file + ": " +
                      TakeOpenSslErrors("OpenSSL refused it"));
  }
  return context;
}

}  // namespace

std::shared_ptr<const ServerIdentity> ServerIdentity::Load(const std::string& certificate_file,
                                                           const std::string& key_file) {
  CertificateHandle certificate(
      PEM_read_bio_X509(OpenFile(certificate_file, "certificate").get(), nullptr, nullptr,
                        nullptr));
  if (certificate == nullptr) {
    ERR_clear_error();
    throw ConfigError("the TLS certificate file " + certificate_file +
                      " holds no PEM certificate (a block starting -----BEGIN CERTIFICATE-----): "
                      "give the server's certificate in PEM form (`mssql-cdc sim tls-cert` "
                      "makes one)");
  }
  KeyHandle key(
      PEM_read_bio_PrivateKey(OpenFile(key_file, "key").get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    ERR_clear_error();
    throw ConfigError("the TLS key file " + key_file +
                      " holds no unencrypted PEM private key (a block starting -----BEGIN "
                      "PRIVATE KEY-----): give the key of the certificate " + certificate_file);
  }
  if (X509_check_private_key(certificate.get(), key.get()) != 1) {
    ERR_clear_error();
    throw ConfigError("the TLS key " + key_file + " does not belong to the certificate " +
                      certificate_file + ": give the key the certificate was made for");
  }
  const ASN1_TIME* not_before = X509_get0_notBefore(certificate.get());
  const ASN1_TIME* not_after = X509_get0_notAfter(certificate.get());
  if (X509_cmp_current_time(not_after) < 0) {
    throw ConfigError("the TLS certificate " + certificate_file + " expired on " +
                      TimeText(not_after) + ": clients refuse it; make a new one");
  }
  if (X509_cmp_current_time(not_before) > 0) {
    throw ConfigError("the TLS certificate " + certificate_file + " is not valid before " +
                      TimeText(not_before) + ": clients refuse it until then; check the "
                      "clock, or make a new one");
  }
  std::shared_ptr<ServerIdentity> identity(new ServerIdentity());
  identity->subject_ = Subject(certificate.get());
  identity->not_after_ = TimePoint(not_after);
  identity->tds7_ = NewContext(certificate_file, key.get(), TLS1_2_VERSION);
  identity->strict_ = NewContext(certificate_file, key.get(), 0);
  SSL_CTX_set_alpn_select_cb(identity->strict_, SelectAlpn, nullptr);
  return identity;
}

ServerIdentity::~ServerIdentity() {
  SSL_CTX_free(tds7_);
  SSL_CTX_free(strict_);
}

}  // namespace mssql_cdc::tls
