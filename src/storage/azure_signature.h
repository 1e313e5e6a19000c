// Azure Storage's Shared Key authorization for the Blob requests the engine makes itself (the
// conditional Put Blob of a commit, decision 0017), and the base64 both it and account keys use.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/http_client.h"

namespace mssql_cdc::storage {

// Signs `request` for `account` with its key (decoded bytes) at `now`: adds x-ms-date and
// Authorization: SharedKey. `query` holds the request's query parameters decoded (the target
// carries them encoded); every x-ms- header the request holds is signed, and the standard
// headers the scheme names. The request's Content-Length is its body's size.
void SignAzureSharedKey(HttpRequest& request, const std::string& account,
                        const std::string& key, const std::vector<std::pair<std::string, std::string>>& query,
                        std::chrono::system_clock::time_point now);

// An HTTP date ("Sat, 05 Dec 2026 14:56:23 GMT"), as x-ms-date carries it.
std::string HttpDate(std::chrono::system_clock::time_point now);

}  // namespace mssql_cdc::storage
