#include "source/odbc/statement.h"

#include <cstring>

#include "core/errors.h"
#include "core/options.h"
#include "source/odbc/diagnostics.h"

namespace mssql_cdc::odbc {
namespace {

constexpr std::size_t kTextPieceBytes = 64 * 1024;

std::string NameOf(const SQLWCHAR* units, SQLSMALLINT length) {
  return Utf16ToUtf8(reinterpret_cast<const Utf16Unit*>(units),
                     static_cast<std::size_t>(std::max<SQLSMALLINT>(length, 0)));
}

}  // namespace

std::int64_t TimestampMicros(const SQL_TIMESTAMP_STRUCT& ts) {
  const std::int64_t days = DaysFromCivil(ts.year, ts.month, ts.day);
  return days * kMicrosPerDay + ts.hour * kMicrosPerHour + ts.minute * kMicrosPerMinute +
         ts.second * kMicrosPerSecond + ts.fraction / 1000;
}

OdbcStatement::OdbcStatement(OdbcConnection& connection) : connection_(connection) {
  CheckOdbc(SQLAllocHandle(SQL_HANDLE_STMT, connection_.handle(), &stmt_), SQL_HANDLE_DBC,
            connection_.handle(), "allocating an ODBC statement", secrets());
}

OdbcStatement::~OdbcStatement() { SQLFreeHandle(SQL_HANDLE_STMT, stmt_); }

void OdbcStatement::Check(SQLRETURN rc, std::string_view operation) const {
  CheckOdbc(rc, SQL_HANDLE_STMT, stmt_, operation, secrets());
}

OdbcStatement::Parameter& OdbcStatement::NewParameter(std::string bytes) {
  Parameter& p = parameters_.emplace_back();
  p.bytes = std::move(bytes);
  p.indicator = static_cast<SQLLEN>(p.bytes.size());
  return p;
}

void OdbcStatement::BindLsn(SQLUSMALLINT index, const Lsn& lsn) {
  Parameter& p = NewParameter(std::string(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize));
  Check(SQLBindParameter(stmt_, index, SQL_PARAM_INPUT, SQL_C_BINARY, SQL_BINARY, Lsn::kSize, 0,
                         p.bytes.data(), static_cast<SQLLEN>(p.bytes.size()), &p.indicator),
        "binding an LSN parameter");
}

void OdbcStatement::BindInt64(SQLUSMALLINT index, std::int64_t value) {
  Parameter& p = NewParameter(std::string(sizeof value, '\0'));
  std::memcpy(p.bytes.data(), &value, sizeof value);
  p.indicator = 0;
  Check(SQLBindParameter(stmt_, index, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 0, 0,
                         p.bytes.data(), 0, &p.indicator),
        "binding a bigint parameter");
}

void OdbcStatement::BindText(SQLUSMALLINT index, std::string_view utf8) {
  const Utf16String units = Utf8ToUtf16(utf8);
  Parameter& p = NewParameter(std::string(reinterpret_cast<const char*>(units.data()),
                                          units.size() * sizeof(Utf16Unit)));
  // Declared as nvarchar(n) with n at least 1: SQL Server rejects a zero length.
  const SQLULEN chars = std::max<SQLULEN>(units.size(), 1);
  Check(SQLBindParameter(stmt_, index, SQL_PARAM_INPUT, SQL_C_WCHAR, SQL_WVARCHAR, chars, 0,
                         p.bytes.data(), static_cast<SQLLEN>(p.bytes.size()), &p.indicator),
        "binding a text parameter");
}

bool OdbcStatement::Execute(std::string_view sql) {
  Utf16String text = Utf8ToUtf16(sql);
  const SQLRETURN rc =
      SQLExecDirectW(stmt_, reinterpret_cast<SQLWCHAR*>(text.data()), static_cast<SQLINTEGER>(text.size()));
  if (rc == SQL_NO_DATA) return false;
  Check(rc, "SQLExecDirect");
  // Row counts and SET statements come as results without columns: skip to the rows.
  while (ColumnCount() == 0) {
    const SQLRETURN more = SQLMoreResults(stmt_);
    if (more == SQL_NO_DATA) return false;
    Check(more, "SQLMoreResults");
  }
  return true;
}

SQLSMALLINT OdbcStatement::ColumnCount() const {
  SQLSMALLINT count = 0;
  Check(SQLNumResultCols(stmt_, &count), "SQLNumResultCols");
  return count;
}

ColumnDescription OdbcStatement::Describe(SQLUSMALLINT column) const {
  SQLWCHAR name[256];
  SQLSMALLINT name_length = 0;
  ColumnDescription out;
  SQLSMALLINT nullable = 0;
  Check(SQLDescribeColW(stmt_, column, name, 256, &name_length, &out.sql_type, &out.size,
                        &out.decimal_digits, &nullable),
        "SQLDescribeCol");
  out.name = NameOf(name, std::min<SQLSMALLINT>(name_length, 255));
  return out;
}

SQLUSMALLINT OdbcStatement::FindColumn(std::string_view name) const {
  const SQLSMALLINT count = ColumnCount();
  const std::string wanted = AsciiLower(name);
  for (SQLSMALLINT i = 1; i <= count; ++i) {
    if (AsciiLower(Describe(static_cast<SQLUSMALLINT>(i)).name) == wanted) {
      return static_cast<SQLUSMALLINT>(i);
    }
  }
  return 0;
}

SQLUSMALLINT OdbcStatement::RequireColumn(std::string_view name, std::string_view what) const {
  const SQLUSMALLINT column = FindColumn(name);
  if (column != 0) return column;
  std::string names;
  const SQLSMALLINT count = ColumnCount();
  for (SQLSMALLINT i = 1; i <= count; ++i) {
    names += (names.empty() ? "" : ", ") + Describe(static_cast<SQLUSMALLINT>(i)).name;
  }
  throw SourceError("the server's answer to " + std::string(what) + " has no column '" +
                    std::string(name) + "' (it has: " + (names.empty() ? "none" : names) +
                    "): the server is not a SQL Server this backend can read");
}

bool OdbcStatement::Fetch() {
  const SQLRETURN rc = SQLFetch(stmt_);
  if (rc == SQL_NO_DATA) return false;
  Check(rc, "SQLFetch");
  return true;
}

std::optional<std::string> OdbcStatement::GetText(SQLUSMALLINT column) {
  std::vector<char> piece(kTextPieceBytes);
  std::vector<Utf16Unit> units;
  const bool present = ReadLongData(
      *this, column, SQL_C_WCHAR, piece,
      [&](const void* data, std::size_t bytes) {
        const auto* begin = static_cast<const Utf16Unit*>(data);
        units.insert(units.end(), begin, begin + bytes / sizeof(Utf16Unit));
      },
      [&](std::size_t total) { units.reserve(total / sizeof(Utf16Unit)); });
  if (!present) return std::nullopt;
  return Utf16ToUtf8(units.data(), units.size());
}

std::optional<std::int64_t> OdbcStatement::GetInt(SQLUSMALLINT column) {
  SQLBIGINT value = 0;
  SQLLEN indicator = 0;
  Check(SQLGetData(stmt_, column, SQL_C_SBIGINT, &value, sizeof value, &indicator), "SQLGetData");
  if (indicator == SQL_NULL_DATA) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

std::optional<std::string> OdbcStatement::GetBytes(SQLUSMALLINT column) {
  std::vector<char> piece(kTextPieceBytes);
  std::string bytes;
  const bool present = ReadLongData(
      *this, column, SQL_C_BINARY, piece,
      [&](const void* data, std::size_t n) { bytes.append(static_cast<const char*>(data), n); },
      [&](std::size_t total) { bytes.reserve(total); });
  if (!present) return std::nullopt;
  return bytes;
}

std::optional<SQL_TIMESTAMP_STRUCT> OdbcStatement::GetTimestamp(SQLUSMALLINT column) {
  SQL_TIMESTAMP_STRUCT value{};
  SQLLEN indicator = 0;
  Check(SQLGetData(stmt_, column, SQL_C_TYPE_TIMESTAMP, &value, sizeof value, &indicator),
        "SQLGetData");
  if (indicator == SQL_NULL_DATA) return std::nullopt;
  return value;
}

}  // namespace mssql_cdc::odbc
