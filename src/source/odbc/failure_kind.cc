#include "source/odbc/failure_kind.h"

namespace mssql_cdc::odbc {
namespace {

constexpr std::int32_t kLoginFailedError = 18456;
constexpr std::int32_t kPermissionDeniedError = 229;
constexpr std::int32_t kInvalidObjectError = 208;
constexpr std::int32_t kRangePurgedError = 313;
constexpr std::int32_t kDeadlockError = 1205;

// FreeTDS reports a lost connection with its own error numbers, under SQLSTATEs such as
// 01000 or HY000 rather than 08S01: read, write, connect, timeout, unexpected EOF, closed.
bool IsFreeTdsNetworkError(const OdbcDiagnostic& d) {
  switch (d.native_error) {
    case 20002: case 20003: case 20004: case 20006: case 20009: case 20017: case 20020:
      return d.sqlstate.substr(0, 2) == "01" || d.sqlstate.substr(0, 2) == "08" ||
             d.sqlstate.substr(0, 2) == "HY";
    default:
      return false;
  }
}

// Driver 18 passes OpenSSL's reason on: "SSL Provider: [error:0A000086:SSL
// routines::certificate verify failed:self-signed certificate in certificate chain]"; it
// reports it under 08001, as it does a server that is down, but no retry mends it. So are a
// ServerCertificate that is not the server's ("Provided certificate doesn't match with
// server/peer certificate") and one that cannot be read ("Invalid file path for server
// certificate").
bool IsCertificateRefusal(const OdbcDiagnostic& d) {
  for (const char* reason : {"certificate verify failed",
                             "Provided certificate doesn't match with server/peer certificate",
                             "Invalid file path for server certificate"}) {
    if (d.message.find(reason) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool IsTransientSqlState(std::string_view sqlstate) {
  return sqlstate.substr(0, 2) == "08" || sqlstate == "HYT00" || sqlstate == "HYT01" ||
         sqlstate == "40001";
}

FailureKind Classify(const OdbcFailure& failure, bool connection_dead) {
  bool transient = connection_dead;
  for (const auto& d : failure.diagnostics()) {
    if (d.native_error == kLoginFailedError || d.sqlstate == "28000") return FailureKind::kLoginFailed;
    if (IsCertificateRefusal(d)) return FailureKind::kCertificateRefused;
  }
  for (const auto& d : failure.diagnostics()) {
    switch (d.native_error) {
      case kPermissionDeniedError: return FailureKind::kPermissionDenied;
      case kInvalidObjectError: return FailureKind::kObjectMissing;
      case kRangePurgedError: return FailureKind::kRangePurged;
      case kDeadlockError: transient = true; break;
      default: break;
    }
    if (IsTransientSqlState(d.sqlstate) || IsFreeTdsNetworkError(d)) transient = true;
  }
  return transient ? FailureKind::kTransient : FailureKind::kOther;
}

}  // namespace mssql_cdc::odbc
