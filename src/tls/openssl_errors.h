// OpenSSL reports failures on a per-thread error queue; this turns it into text for a message.
#pragma once

#include <string>

namespace mssql_cdc::tls {

// The reasons on this thread's OpenSSL error queue, oldest first, joined by "; " ("certificate
// verify failed"), and the queue cleared. `fallback` when the queue is empty.
std::string TakeOpenSslErrors(const std::string& fallback);

}  // namespace mssql_cdc::tls
