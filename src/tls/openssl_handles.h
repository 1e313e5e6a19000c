// Owning handles for the OpenSSL objects this component creates, and the text a memory BIO
// was written, so each file frees them the same way.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace mssql_cdc::tls {

struct OpenSslFree {
  void operator()(BIO* b) const { BIO_free(b); }
  void operator()(X509* x) const { X509_free(x); }
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioHandle = std::unique_ptr<BIO, OpenSslFree>;
using CertificateHandle = std::unique_ptr<X509, OpenSslFree>;
using KeyHandle = std::unique_ptr<EVP_PKEY, OpenSslFree>;

// What was written to a memory BIO.
inline std::string MemoryBioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace mssql_cdc::tls
