#include "tls/test_authority.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "core/errors.h"
#include "tls/openssl_errors.h"
#include "tls/tds_names.h"
#include "tls/openssl_handles.h"

namespace mssql_cdc::tls {
namespace {

using Key = KeyHandle;
using Certificate = CertificateHandle;

void Require(bool ok, const char* what) {
  if (!ok) throw InternalError(std::string("making a test certificate: ") + what + ": " +
                               TakeOpenSslErrors("OpenSSL failed"));
}

Key NewKey() {
  Key key(EVP_RSA_gen(2048));
  Require(key != nullptr, "generating an RSA key");
  return key;
}

void AddExtension(X509* certificate, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  Require(extension != nullptr, "an extension");
  X509_add_ext(certificate, extension, -1);
  X509_EXTENSION_free(extension);
}

Certificate NewCertificate(const std::string& common_name, EVP_PKEY* key,
                           const TestCertificateRequest& request) {
  Certificate certificate(X509_new());
  Require(certificate != nullptr, "X509_new");
  X509_set_version(certificate.get(), 2);  // v3: extensions
  unsigned char serial[16];
  Require(RAND_bytes(serial, sizeof(serial)) == 1, "a serial number");
  serial[0] &= 0x7F;  // positive
  BIGNUM* number = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate.get()));
  BN_free(number);
  const auto seconds = [](std::chrono::system_clock::time_point t) {
    return std::chrono::system_clock::to_time_t(t);
  };
  Require(ASN1_TIME_set(X509_getm_notBefore(certificate.get()), seconds(request.not_before)) !=
              nullptr,
          "the start of validity");
  Require(ASN1_TIME_set(X509_getm_notAfter(certificate.get()), seconds(request.not_after)) !=
              nullptr,
          "the end of validity");
  X509_NAME* name = X509_get_subject_name(certificate.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("mssql-cdc test"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_pubkey(certificate.get(), key);
  return certificate;
}

void Sign(X509* certificate, EVP_PKEY* issuer_key) {
  Require(X509_sign(certificate, issuer_key, EVP_sha256()) > 0, "signing");
}

std::string Pem(X509* certificate) {
  BioHandle out(BIO_new(BIO_s_mem()));
  Require(PEM_write_bio_X509(out.get(), certificate) == 1, "writing a certificate");
  return MemoryBioText(out.get());
}

std::string Pem(EVP_PKEY* key) {
  BioHandle out(BIO_new(BIO_s_mem()));
  Require(PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "writing a key");
  return MemoryBioText(out.get());
}

}  // namespace

TestCertificates MakeTestCertificates(const TestCertificateRequest& request) {
  const std::string& host = request.host;
  if (host.empty() || host.size() > 253 ||
      host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") !=
          std::string::npos) {
    throw ConfigError("a certificate's host must be a DNS name or an IP address (letters, "
                      "digits, '.', '-', ':'), not '" + host + "'");
  }
  if (request.not_after <= request.not_before) {
    throw ConfigError("a certificate's validity must end after it begins");
  }
  Key ca_key = NewKey();
  Certificate ca = NewCertificate("mssql-cdc test CA", ca_key.get(), request);
  X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get()));
  AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
  Sign(ca.get(), ca_key.get());

  Key server_key = NewKey();
  Certificate server = NewCertificate(host, server_key.get(), request);
  X509_set_issuer_name(server.get(), X509_get_subject_name(ca.get()));
  AddExtension(server.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  AddExtension(server.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  AddExtension(server.get(), ca.get(), NID_ext_key_usage, "serverAuth");
  AddExtension(server.get(), ca.get(), NID_subject_alt_name,
               (IsIpAddress(host) ? "IP:" : "DNS:") + host);
  AddExtension(server.get(), ca.get(), NID_subject_key_identifier, "hash");
  AddExtension(server.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  Sign(server.get(), ca_key.get());

  TestCertificates out;
  out.ca_certificate = Pem(ca.get());
  out.server_certificate = Pem(server.get()) + out.ca_certificate;
  out.server_key = Pem(server_key.get());
  return out;
}

}  // namespace mssql_cdc::tls
