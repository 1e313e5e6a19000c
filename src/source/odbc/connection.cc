#include "source/odbc/connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "source/odbc/diagnostics.h"
#include "source/odbc/odbc_environment.h"
#include "source/odbc/utf16.h"

namespace mssql_cdc::odbc {
namespace {

constexpr SQLULEN kPacketSize = 32767;  // the largest TDS packet SQL Server accepts
// Driver 18's pre-connect attribute SQL_COPT_SS_ACCESS_TOKEN (msodbcsql.h).
constexpr SQLINTEGER kAccessTokenAttribute = 1256;

// The ACCESSTOKEN structure the attribute points to: a little-endian DWORD byte count, then
// the token's bytes each widened to two (UTF-16LE of an ASCII token).
std::vector<unsigned char> AccessTokenStructure(const std::string& token) {
  const std::uint32_t size = static_cast<std::uint32_t>(token.size() * 2);
  std::vector<unsigned char> out(4 + size, 0);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(size >> (8 * i));
  for (std::size_t i = 0; i < token.size(); ++i) out[4 + 2 * i] = static_cast<unsigned char>(token[i]);
  return out;
}

}  // namespace

OdbcConnection::OdbcConnection(std::shared_ptr<const ConnectionSettings> settings)
    : settings_(std::move(settings)) {
  const SQLHENV env = Environment();
  CheckOdbc(SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc_), SQL_HANDLE_ENV, env,
            "allocating an ODBC connection", secrets());
  try {
    const auto timeout = static_cast<SQLUINTEGER>(settings_->login_timeout_seconds);
    CheckOdbc(SQLSetConnectAttrW(dbc_, SQL_ATTR_LOGIN_TIMEOUT,
                                 reinterpret_cast<SQLPOINTER>(static_cast<SQLULEN>(timeout)), 0),
              SQL_HANDLE_DBC, dbc_, "setting the login timeout", secrets());
    // Large TDS packets: bulk reads cost both sides far fewer packets and syscalls. A server
    // that allows less answers with its own size; a driver that cannot set it keeps its own.
    if (!settings_->driver.sets_packet_size) {
      SQLSetConnectAttrW(dbc_, SQL_ATTR_PACKET_SIZE,
                         reinterpret_cast<SQLPOINTER>(static_cast<SQLULEN>(kPacketSize)), 0);
    }
    std::vector<unsigned char> token;
    if (settings_->driver.access_token) {
      token = AccessTokenStructure(*settings_->driver.access_token);
      CheckOdbc(SQLSetConnectAttrW(dbc_, kAccessTokenAttribute, token.data(), SQL_IS_POINTER),
                SQL_HANDLE_DBC, dbc_, "giving the driver the access token", secrets());
    }
    Utf16String text = Utf8ToUtf16(settings_->driver.text);
    const SQLRETURN rc = SQLDriverConnectW(
        dbc_, nullptr, reinterpret_cast<SQLWCHAR*>(text.data()),
        static_cast<SQLSMALLINT>(text.size()), nullptr, 0, nullptr, SQL_DRIVER_NOPROMPT);
    // The string holds the password, the structure the token: overwrite the copies before
    // anything else can see them.
    std::fill(text.begin(), text.end(), Utf16Unit{0});
    std::fill(token.begin(), token.end(), static_cast<unsigned char>(0));
    CheckOdbc(rc, SQL_HANDLE_DBC, dbc_, "connecting to " + settings_->driver.server, secrets());
    connected_ = true;
    CheckOdbc(SQLSetConnectAttrW(dbc_, SQL_ATTR_AUTOCOMMIT,
                                 reinterpret_cast<SQLPOINTER>(SQL_AUTOCOMMIT_ON), 0),
              SQL_HANDLE_DBC, dbc_, "turning autocommit on", secrets());
  } catch (...) {
    if (connected_) SQLDisconnect(dbc_);
    SQLFreeHandle(SQL_HANDLE_DBC, dbc_);
    throw;
  }
  spdlog::debug("odbc: connected to {} through driver {}", settings_->driver.server,
                settings_->driver.driver.empty() ? "of the DSN" : settings_->driver.driver);
}

bool OdbcConnection::IsDead() const {
  SQLUINTEGER dead = SQL_CD_FALSE;
  const SQLRETURN rc = SQLGetConnectAttrW(dbc_, SQL_ATTR_CONNECTION_DEAD, &dead, 0, nullptr);
  return SQL_SUCCEEDED(rc) && dead == SQL_CD_TRUE;
}

OdbcConnection::~OdbcConnection() {
  if (connected_) SQLDisconnect(dbc_);
  SQLFreeHandle(SQL_HANDLE_DBC, dbc_);
}

}  // namespace mssql_cdc::odbc
