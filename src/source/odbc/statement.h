// One statement on an OdbcConnection: binds parameters, runs a statement of statements.h,
// describes its result columns, and reads small results (catalog and LSN queries) value by
// value with SQLGetData. Bulk reads of change and snapshot rows bind columns instead
// (result_fetcher.h), on the same handle.
//
// Parameter buffers live as long as the statement. Every failing call throws OdbcFailure.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "source/odbc/connection.h"
#include "source/odbc/odbc_api.h"
#include "source/odbc/utf16.h"

namespace mssql_cdc::odbc {

struct ColumnDescription {
  std::string name;
  SQLSMALLINT sql_type = 0;
  SQLULEN size = 0;  // characters or bytes; 0 or very large for (max) columns
  SQLSMALLINT decimal_digits = 0;
};

class OdbcStatement {
 public:
  explicit OdbcStatement(OdbcConnection& connection);
  ~OdbcStatement();
  OdbcStatement(const OdbcStatement&) = delete;
  OdbcStatement& operator=(const OdbcStatement&) = delete;

  SQLHSTMT handle() const { return stmt_; }
  const std::vector<std::string>& secrets() const { return connection_.secrets(); }

  // Parameters, 1-based, before Execute. An LSN is binary(10), a count bigint, text nvarchar.
  void BindLsn(SQLUSMALLINT index, const Lsn& lsn);
  void BindInt64(SQLUSMALLINT index, std::int64_t value);
  void BindText(SQLUSMALLINT index, std::string_view utf8);

  // Runs `sql` and moves to its first result that has columns; false when it has none.
  bool Execute(std::string_view sql);

  SQLSMALLINT ColumnCount() const;
  ColumnDescription Describe(SQLUSMALLINT column) const;
  // The 1-based index of the result column named `name` (ignoring ASCII case); 0 when none.
  SQLUSMALLINT FindColumn(std::string_view name) const;
  // As FindColumn; throws SourceError naming `what` (the statement's purpose) when missing.
  SQLUSMALLINT RequireColumn(std::string_view name, std::string_view what) const;

  // The next row of a result read with SQLGetData; false at its end.
  bool Fetch();

  // Values of the current row, nullopt for NULL. Text of any length is read in pieces.
  std::optional<std::string> GetText(SQLUSMALLINT column);
  std::optional<std::int64_t> GetInt(SQLUSMALLINT column);
  std::optional<std::string> GetBytes(SQLUSMALLINT column);
  std::optional<SQL_TIMESTAMP_STRUCT> GetTimestamp(SQLUSMALLINT column);

  // Throws OdbcFailure for `operation` unless `rc` succeeded.
  void Check(SQLRETURN rc, std::string_view operation) const;

 private:
  struct Parameter {
    std::string bytes;
    SQLLEN indicator = 0;
  };
  Parameter& NewParameter(std::string bytes);

  OdbcConnection& connection_;
  SQLHSTMT stmt_ = SQL_NULL_HSTMT;
  std::deque<Parameter> parameters_;  // stable addresses for the driver
};

// Microseconds since the epoch of an ODBC timestamp (nanosecond fraction truncated to
// microseconds).
std::int64_t TimestampMicros(const SQL_TIMESTAMP_STRUCT& ts);

// Reads the current row's `column` with SQLGetData in pieces of `piece_bytes`, handing each
// piece to `consume(const void* data, std::size_t bytes)`. C type SQL_C_WCHAR (pieces are
// whole UTF-16 units; a surrogate pair may straddle two pieces), SQL_C_CHAR (a UTF-8
// sequence may straddle two pieces) or SQL_C_BINARY. Returns false for NULL.
// `expected(total_bytes)` is called once when the driver knows the size.
template <typename Consume, typename Expect>
bool ReadLongData(const OdbcStatement& statement, SQLUSMALLINT column, SQLSMALLINT c_type,
                  std::vector<char>& piece, Consume&& consume, Expect&& expected) {
  const bool wide = c_type == SQL_C_WCHAR;
  const std::size_t terminator = wide ? sizeof(SQLWCHAR) : c_type == SQL_C_CHAR ? 1 : 0;
  bool first = true;
  while (true) {
    SQLLEN indicator = 0;
    const SQLRETURN rc = SQLGetData(statement.handle(), column, c_type, piece.data(),
                                    static_cast<SQLLEN>(piece.size()), &indicator);
    if (rc == SQL_NO_DATA) return true;  // the previous piece was the last
    statement.Check(rc, "SQLGetData");
    if (indicator == SQL_NULL_DATA) return false;
    if (first && indicator != SQL_NO_TOTAL) expected(static_cast<std::size_t>(indicator));
    first = false;
    const std::size_t room = piece.size() - terminator;
    if (rc == SQL_SUCCESS || (indicator != SQL_NO_TOTAL && static_cast<std::size_t>(indicator) <= room)) {
      consume(piece.data(), static_cast<std::size_t>(indicator));
      return true;
    }
    consume(piece.data(), wide ? room - room % sizeof(SQLWCHAR) : room);
  }
}

}  // namespace mssql_cdc::odbc
