#include "source/odbc/odbc_environment.h"

#include <mutex>

#include "core/errors.h"
#include "source/odbc/utf16.h"

namespace mssql_cdc::odbc {

SQLHENV Environment() {
  static SQLHENV env = [] {
    SQLHENV handle = SQL_NULL_HENV;
    if (!Succeeded(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &handle))) {
      throw SourceError(
          "the ODBC driver manager cannot allocate an environment: check that unixODBC "
          "(libodbc2) is installed");
    }
    SQLSetEnvAttr(handle, SQL_ATTR_ODBC_VERSION, reinterpret_cast<SQLPOINTER>(SQL_OV_ODBC3_80),
                  0);
    return handle;
  }();
  return env;
}

std::vector<std::string> InstalledDrivers() {
  // SQLDrivers walks a cursor kept in the shared environment.
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::vector<std::string> drivers;
  SQLWCHAR name[512];
  SQLWCHAR attributes[2048];
  SQLSMALLINT name_length = 0;
  SQLSMALLINT attributes_length = 0;
  SQLUSMALLINT direction = SQL_FETCH_FIRST;
  while (Succeeded(SQLDriversW(Environment(), direction, name, 512, &name_length, attributes,
                               2048, &attributes_length))) {
    direction = SQL_FETCH_NEXT;
    const auto* units = reinterpret_cast<const Utf16Unit*>(name);
    std::size_t n = 0;
    while (n < 511 && units[n] != 0) ++n;
    drivers.push_back(Utf16ToUtf8(units, n));
  }
  return drivers;
}

}  // namespace mssql_cdc::odbc
