// AWS Signature Version 4 for the S3 requests the engine makes itself (the conditional PUT of a
// commit, decision 0017). The keys come from the AWS SDK's credential chain inside Arrow's S3
// filesystem; this only computes the HMACs the protocol defines over one request.
#pragma once

#include <chrono>
#include <string>

#include "storage/http_client.h"

namespace mssql_cdc::storage {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty for long-term keys
};

// Percent-encodes an S3 object key for a request path: every byte but A-Z a-z 0-9 - _ . ~ and
// '/' (the encoding SigV4 and S3 agree on).
std::string S3EncodeKey(const std::string& key);
// The same for a query parameter's name or value, where '/' is encoded as well.
std::string AwsEncodeQueryValue(const std::string& value);

// Signs `request` for `service` in `region` at `now`: adds x-amz-date, x-amz-content-sha256,
// x-amz-security-token (with a session token) and Authorization. Every header the request
// holds when called is signed, and `host` (the Host header's value) with them.
void SignAwsRequest(HttpRequest& request, const std::string& host, const std::string& region,
                    const std::string& service, const AwsCredentials& credentials,
                    std::chrono::system_clock::time_point now);

// The SHA-256 of `data`, as lower-case hex.
std::string Sha256Hex(const std::string& data);

}  // namespace mssql_cdc::storage
