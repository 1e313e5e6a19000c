#include "tls/openssl_errors.h"

#include <openssl/err.h>

namespace mssql_cdc::tls {

std::string TakeOpenSslErrors(const std::string& fallback) {
  std::string out;
  while (unsigned long code = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(code);
    if (!out.empty()) out += "; ";
    out += reason != nullptr ? reason : "error " + std::to_string(code);
  }
  return out.empty() ? fallback : out;
}

}  // namespace mssql_cdc::tls
