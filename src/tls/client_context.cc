#include "tls/client_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls/openssl_errors.h"
#include "tls/openssl_handles.h"
#include "tls/tds_names.h"

namespace mssql_cdc::tls {
namespace {

// The driver compares names, never addresses: a certificate for 127.0.0.1 (as CN or as an IP
// subjectAltName) does not satisfy Server=127.0.0.1. OpenSSL's name check would accept the CN,
// so an address is refused here, after the chain's own checks passed.
int RefuseAddresses(int ok, X509_STORE_CTX* store) {
  if (ok != 1 || X509_STORE_CTX_get_error_depth(store) != 0) return ok;
  const SSL* ssl = static_cast<const SSL*>(
      X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* self = static_cast<const ClientContext*>(
      SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (self != nullptr && IsIpAddress(self->rules().expected_host)) {
    X509_STORE_CTX_set_error(store, X509_V_ERR_HOSTNAME_MISMATCH);
    return 0;
  }
  return ok;
}

X509* ReadCertificate(const std::string& path) {
  BioHandle bio(BIO_new_file(path.c_str(), "rb"));
  if (bio == nullptr) return nullptr;
  X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  if (certificate == nullptr) {
    ERR_clear_error();
    BIO_reset(bio.get());
    certificate = d2i_X509_bio(bio.get(), nullptr);
  }
  ERR_clear_error();
  return certificate;
}

}  // namespace

std::shared_ptr<const ClientContext> ClientContext::Make(const CertificateRules& rules,
                                                         bool strict) {
  std::shared_ptr<ClientContext> made(new ClientContext());
  made->rules_ = rules;
  made->strict_ = strict;
  if (rules.check == CertificateRules::Check::kPinned) {
    made->pinned_ = ReadCertificate(rules.pinned_file);
    if (made->pinned_ == nullptr) {
      throw ConfigError("Invalid file path for server certificate: ServerCertificate names " +
                        rules.pinned_file +
                        ", which is not a readable PEM or DER certificate; name the file of the "
                        "server's own certificate");
    }
  }
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  if (context == nullptr) throw InternalError(TakeOpenSslErrors("SSL_CTX_new failed"));
  made->context_ = context;
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  if (!strict) SSL_CTX_set_max_proto_version(context, TLS1_2_VERSION);
  if (strict && SSL_CTX_set_alpn_protos(context, kAlpnTds8, sizeof(kAlpnTds8)) != 0) {
    throw InternalError(TakeOpenSslErrors("SSL_CTX_set_alpn_protos failed"));
  }
  if (rules.check != CertificateRules::Check::kChain) {
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);
    return made;
  }
  // Where the driver's OpenSSL looks: the system store, SSL_CERT_FILE, SSL_CERT_DIR.
  if (SSL_CTX_set_default_verify_paths(context) != 1) ERR_clear_error();
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(context);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (X509_VERIFY_PARAM_set1_host(param, rules.expected_host.c_str(), 0) != 1) {
    throw InternalError(TakeOpenSslErrors("X509_VERIFY_PARAM_set1_host failed"));
  }
  SSL_CTX_set_app_data(context, made.get());
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, RefuseAddresses);
  return made;
}

ClientContext::~ClientContext() {
  SSL_CTX_free(context_);
  X509_free(pinned_);
}

bool ClientContext::MatchesPinned(X509* presented) const {
  return pinned_ != nullptr && presented != nullptr && X509_cmp(pinned_, presented) == 0;
}

}  // namespace mssql_cdc::tls
