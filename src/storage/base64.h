// Base64 (RFC 4648, with padding) through OpenSSL: keys, signatures, proxy credentials and
// token payloads the stores exchange.
#pragma once

#include <optional>
#include <string>

namespace mssql_cdc::storage {

std::string Base64Encode(const std::string& bytes);
// nullopt when `text` is not base64.
std::optional<std::string> Base64Decode(const std::string& text);

}  // namespace mssql_cdc::storage
