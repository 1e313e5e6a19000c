#include "source/odbc/diagnostics.h"

#include "source/odbc/utf16.h"

namespace mssql_cdc::odbc {
namespace {

std::string Join(const std::vector<OdbcDiagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += "; ";
    out += "[" + d.sqlstate + "] " + d.message;
    if (d.native_error != 0) out += " (error " + std::to_string(d.native_error) + ")";
  }
  return out.empty() ? "no diagnostic from the driver" : out;
}

}  // namespace

OdbcFailure::OdbcFailure(std::string operation, std::vector<OdbcDiagnostic> diagnostics)
    : SourceError(operation + " failed: " + Join(diagnostics)),
      operation_(std::move(operation)),
      diagnostics_(std::move(diagnostics)) {}

std::string OdbcFailure::sqlstate() const {
  return diagnostics_.empty() ? "HY000" : diagnostics_.front().sqlstate;
}

bool OdbcFailure::HasNativeError(std::int32_t number) const {
  for (const auto& d : diagnostics_) {
    if (d.native_error == number) return true;
  }
  return false;
}

std::string OdbcFailure::Details() const { return Join(diagnostics_); }

std::string Redact(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    if (secret.size() < 3) continue;  // shorter ones would blank out ordinary words
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + 3)) {
      text.replace(at, secret.size(), "***");
    }
  }
  return text;
}

std::vector<OdbcDiagnostic> ReadDiagnostics(SQLSMALLINT handle_type, SQLHANDLE handle,
                                            const std::vector<std::string>& secrets) {
  std::vector<OdbcDiagnostic> out;
  if (handle == SQL_NULL_HANDLE) return out;
  for (SQLSMALLINT record = 1; record <= 20; ++record) {
    SQLWCHAR state[6] = {};
    SQLINTEGER native = 0;
    SQLSMALLINT length = 0;
    // Probe the length first: SQL Server messages reach 2,000 characters and more.
    SQLRETURN rc = SQLGetDiagRecW(handle_type, handle, record, state, &native, nullptr, 0, &length);
    if (!Succeeded(rc)) break;
    std::vector<SQLWCHAR> message(static_cast<std::size_t>(length) + 1);
    rc = SQLGetDiagRecW(handle_type, handle, record, state, &native, message.data(),
                        static_cast<SQLSMALLINT>(message.size()), &length);
    if (!Succeeded(rc)) break;
    OdbcDiagnostic d;
    d.sqlstate = Utf16ToUtf8(reinterpret_cast<const Utf16Unit*>(state), 5);
    d.native_error = native;
    const std::size_t units = std::min<std::size_t>(static_cast<std::size_t>(length), message.size() - 1);
    d.message = Redact(Utf16ToUtf8(reinterpret_cast<const Utf16Unit*>(message.data()), units),
                       secrets);
    out.push_back(std::move(d));
  }
  return out;
}

void CheckOdbc(SQLRETURN rc, SQLSMALLINT handle_type, SQLHANDLE handle,
               std::string_view operation, const std::vector<std::string>& secrets) {
  if (Succeeded(rc)) return;
  if (rc == SQL_INVALID_HANDLE) {
    throw OdbcFailure(std::string(operation), {{"HY000", 0, "invalid ODBC handle (a bug)"}});
  }
  throw OdbcFailure(std::string(operation), ReadDiagnostics(handle_type, handle, secrets));
}

}  // namespace mssql_cdc::odbc
