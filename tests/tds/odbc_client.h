// A thin RAII layer over unixODBC for the integration tests: a connection through the
// FreeTDS driver, statements, typed column reads and the diagnostics of a failure.
#pragma once

#include <sql.h>
#include <sqlext.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mssql_cdc::tds::testing {

struct OdbcDiagnostic {
  std::string sqlstate;
  long native = 0;
  std::string message;
};

inline std::vector<OdbcDiagnostic> Diagnostics(SQLSMALLINT type, SQLHANDLE handle) {
  std::vector<OdbcDiagnostic> out;
  for (SQLSMALLINT i = 1;; ++i) {
    SQLCHAR state[6] = {};
    SQLINTEGER native = 0;
    SQLCHAR message[4096] = {};
    SQLSMALLINT length = 0;
    SQLRETURN rc =
        SQLGetDiagRec(type, handle, i, state, &native, message, sizeof(message), &length);
    if (!SQL_SUCCEEDED(rc)) break;
    out.push_back({reinterpret_cast<char*>(state), native, reinterpret_cast<char*>(message)});
  }
  return out;
}

inline std::string Describe(const std::vector<OdbcDiagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    out += "[" + d.sqlstate + " " + std::to_string(d.native) + "] " + d.message + "\n";
  }
  return out;
}

inline std::string ConnectionString(int port, const std::string& user = "u",
                                    const std::string& password = "p") {
  return "Driver={FreeTDS};Server=127.0.0.1;Port=" + std::to_string(port) +
         ";TDS_Version=7.4;Encryption=off;UID=" + user + ";PWD=" + password +
         ";Database=sim;ClientCharset=UTF-8";
}

class OdbcConnection {
 public:
  OdbcConnection() {
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env_);
    SQLSetEnvAttr(env_, SQL_ATTR_ODBC_VERSION, reinterpret_cast<SQLPOINTER>(SQL_OV_ODBC3), 0);
    SQLAllocHandle(SQL_HANDLE_DBC, env_, &dbc_);
  }
  ~OdbcConnection() {
    if (connected_) SQLDisconnect(dbc_);
    SQLFreeHandle(SQL_HANDLE_DBC, dbc_);
    SQLFreeHandle(SQL_HANDLE_ENV, env_);
  }
  OdbcConnection(const OdbcConnection&) = delete;
  OdbcConnection& operator=(const OdbcConnection&) = delete;

  // False on failure, with the diagnostics in `diagnostics`.
  bool Connect(const std::string& connection_string,
               std::vector<OdbcDiagnostic>* diagnostics = nullptr) {
    SQLCHAR out[1024];
    SQLSMALLINT out_length = 0;
    SQLRETURN rc = SQLDriverConnect(
        dbc_, nullptr, reinterpret_cast<SQLCHAR*>(const_cast<char*>(connection_string.c_str())),
        SQL_NTS, out, sizeof(out), &out_length, SQL_DRIVER_NOPROMPT);
    if (diagnostics != nullptr) *diagnostics = Diagnostics(SQL_HANDLE_DBC, dbc_);
    connected_ = SQL_SUCCEEDED(rc);
    return connected_;
  }

  void Disconnect() {
    if (connected_) SQLDisconnect(dbc_);
    connected_ = false;
  }

  SQLHDBC handle() const { return dbc_; }

 private:
  SQLHENV env_ = SQL_NULL_HENV;
  SQLHDBC dbc_ = SQL_NULL_HDBC;
  bool connected_ = false;
};

class OdbcStatement {
 public:
  explicit OdbcStatement(OdbcConnection& connection) {
    SQLAllocHandle(SQL_HANDLE_STMT, connection.handle(), &stmt_);
  }
  ~OdbcStatement() {
    if (stmt_ != SQL_NULL_HSTMT) SQLFreeHandle(SQL_HANDLE_STMT, stmt_);
  }
  OdbcStatement(const OdbcStatement&) = delete;
  OdbcStatement& operator=(const OdbcStatement&) = delete;

  SQLHSTMT handle() const { return stmt_; }
  std::string Errors() const { return Describe(Diagnostics(SQL_HANDLE_STMT, stmt_)); }

  SQLRETURN ExecDirect(const std::string& sql) {
    return SQLExecDirect(stmt_, reinterpret_cast<SQLCHAR*>(const_cast<char*>(sql.c_str())),
                         SQL_NTS);
  }

  // A whole character column as UTF-8 (SQL_C_CHAR, read in pieces); nullopt for NULL.
  std::optional<std::string> Text(SQLUSMALLINT column) { return Read(column, SQL_C_CHAR); }
  std::optional<std::string> Bytes(SQLUSMALLINT column) { return Read(column, SQL_C_BINARY); }
  std::optional<double> Double(SQLUSMALLINT column) {
    double value = 0;
    SQLLEN indicator = 0;
    SQLRETURN rc = SQLGetData(stmt_, column, SQL_C_DOUBLE, &value, sizeof(value), &indicator);
    if (!SQL_SUCCEEDED(rc)) throw std::runtime_error("SQLGetData failed: " + Errors());
    if (indicator == SQL_NULL_DATA) return std::nullopt;
    return value;
  }
  std::optional<std::int64_t> BigInt(SQLUSMALLINT column) {
    std::int64_t value = 0;
    SQLLEN indicator = 0;
    SQLRETURN rc = SQLGetData(stmt_, column, SQL_C_SBIGINT, &value, sizeof(value), &indicator);
    if (!SQL_SUCCEEDED(rc)) throw std::runtime_error("SQLGetData failed: " + Errors());
    if (indicator == SQL_NULL_DATA) return std::nullopt;
    return value;
  }

 private:
  std::optional<std::string> Read(SQLUSMALLINT column, SQLSMALLINT c_type) {
    std::string out;
    std::vector<char> buffer(64 * 1024);
    // A character read leaves room for the terminating NUL the driver writes.
    const std::size_t usable = c_type == SQL_C_CHAR ? buffer.size() - 1 : buffer.size();
    while (true) {
      SQLLEN indicator = 0;
      SQLRETURN rc = SQLGetData(stmt_, column, c_type, buffer.data(),
                                static_cast<SQLLEN>(buffer.size()), &indicator);
      if (rc == SQL_NO_DATA) break;
      if (!SQL_SUCCEEDED(rc)) throw std::runtime_error("SQLGetData failed: " + Errors());
      if (indicator == SQL_NULL_DATA) return std::nullopt;
      if (rc == SQL_SUCCESS_WITH_INFO &&
          (indicator == SQL_NO_TOTAL || static_cast<std::size_t>(indicator) > usable)) {
        out.append(buffer.data(), usable);
        continue;
      }
      out.append(buffer.data(), static_cast<std::size_t>(indicator));
      break;
    }
    return out;
  }

  SQLHSTMT stmt_ = SQL_NULL_HSTMT;
};

}  // namespace mssql_cdc::tds::testing
