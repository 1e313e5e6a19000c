// Access tokens of the simulator's token logins (`mssql-cdc sim login add --token-env`), which
// stand in for Entra ID logins: a client presents the token itself (the LOGIN7 FEDAUTH
// feature), the simulator knows it by its SHA-256 digest only, so no token is ever stored.
//
// A token shaped like a JSON Web Token (three base64url parts) expires at its `exp` claim,
// as Entra ID's do; any other token never expires.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc::sim {

// The lowercase hexadecimal SHA-256 of the token's bytes.
std::string AccessTokenDigest(std::string_view token);

// The `exp` claim (seconds since 1970-01-01 UTC) of a JSON Web Token; nullopt for a token of
// another shape or without the claim.
std::optional<std::int64_t> AccessTokenExpiry(std::string_view token);

}  // namespace mssql_cdc::sim
