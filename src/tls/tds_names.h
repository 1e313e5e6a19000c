// Names both sides of a TDS TLS connection agree on: the ALPN protocol of TDS 8.0 ("strict")
// and how a host name is told from an IP address (certificates, SNI).
#pragma once

#include <string>

namespace mssql_cdc::tls {

// ALPN's wire form of "tds/8.0": its length, then its bytes.
inline constexpr unsigned char kAlpnTds8[] = {7, 't', 'd', 's', '/', '8', '.', '0'};

// Whether `host` is an IPv4 or IPv6 address rather than a DNS name.
bool IsIpAddress(const std::string& host);

}  // namespace mssql_cdc::tls
