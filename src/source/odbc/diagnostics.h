// What a failed ODBC call reported: its diagnostic records (SQLSTATE, SQL Server error
// number, message), carried by OdbcFailure until the caller decides what it means
// (failure_kind.h) and which engine error it becomes (failure_errors.h).
//
// Messages are read through the wide API and converted to UTF-8. Secret values (the
// password) are replaced by *** in every message read, in case a driver ever echoes one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "source/odbc/odbc_api.h"

namespace mssql_cdc::odbc {

struct OdbcDiagnostic {
  std::string sqlstate;          // five characters, e.g. "08S01"
  std::int32_t native_error = 0;  // the SQL Server error number, 0 for driver errors
  std::string message;
};

// An ODBC call failed. A SourceError, so one that escapes unclassified is still reported as
// the source failing; callers classify it and throw the engine's error instead.
class OdbcFailure : public SourceError {
 public:
  OdbcFailure(std::string operation, std::vector<OdbcDiagnostic> diagnostics);

  const std::string& operation() const { return operation_; }
  const std::vector<OdbcDiagnostic>& diagnostics() const { return diagnostics_; }
  // The first record's SQLSTATE, "HY000" when the driver gave none.
  std::string sqlstate() const;
  bool HasNativeError(std::int32_t number) const;
  // "[SQLSTATE] message (SQL Server error N)" of every record, joined by "; ".
  std::string Details() const;

 private:
  std::string operation_;
  std::vector<OdbcDiagnostic> diagnostics_;
};

// Every diagnostic record of `handle`, messages redacted.
std::vector<OdbcDiagnostic> ReadDiagnostics(SQLSMALLINT handle_type, SQLHANDLE handle,
                                            const std::vector<std::string>& secrets);

// `text` with each secret of three characters or more replaced by ***.
std::string Redact(std::string text, const std::vector<std::string>& secrets);

// Throws OdbcFailure for `operation` unless `rc` means success.
void CheckOdbc(SQLRETURN rc, SQLSMALLINT handle_type, SQLHANDLE handle,
               std::string_view operation, const std::vector<std::string>& secrets);

}  // namespace mssql_cdc::odbc
