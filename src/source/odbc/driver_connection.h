// Turns the user's connection options into the string SQLDriverConnect gets.
//
// Users write SQL Server style strings (`Server=host,port;Database=db;Encrypt=no`), the
// form Microsoft's drivers take. The driver is the one a `Driver=` keyword names; without
// one, "ODBC Driver 18 for SQL Server" when unixODBC lists it, else a Driver 18 library
// among the available drivers (mssql-python-odbc's, by path), else FreeTDS. For FreeTDS
// the string is translated into its dialect (Server and Port apart, TDS_Version=7.4,
// Encryption instead of Encrypt, UTF-8 client charset). The `user` and `password` options
// are appended as braced UID and PWD; an `accessToken` stays out of the string, for the
// connection to pass to Driver 18 before it connects. The result is a secret; what may be
// shown (driver, server, login name) is kept beside it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mssql_cdc::odbc {

inline constexpr std::string_view kMicrosoftDriver18 = "ODBC Driver 18 for SQL Server";
inline constexpr std::string_view kFreeTdsDriver = "FreeTDS";

struct DriverConnection {
  std::string text;          // for SQLDriverConnect only: holds the password
  std::string driver;        // as named or chosen; empty when a DSN picks it
  bool freetds = false;      // the string was translated for FreeTDS
  std::string server;        // the Server (or DSN) value, for messages
  std::string login;         // the login name (user option or UID), empty when none
  std::optional<std::string> access_token;  // Entra ID token for Driver 18 (secret)
  std::vector<std::string> secrets;  // values no message may show (password, token)
  bool sets_packet_size = false;     // the string sets the TDS packet size (always for FreeTDS)
  bool utf8_char_data = false;       // SQL_C_CHAR data is UTF-8 (FreeTDS, ClientCharset=UTF-8)
  // The connection refuses a server that does not encrypt: Encrypt=yes/mandatory/strict (or
  // FreeTDS's Encryption=require), or ODBC Driver 18 without Encrypt, whose default is yes.
  bool requires_encryption = false;
  std::string encryption_setting;    // what asked for it, for messages: "Encrypt=yes", ...
  std::string host;                  // the server's host and TCP port, when the string says
  int port = 0;                      // them (0: a DSN or a named instance decides)
};

// Throws ConfigError when there is no Server, Address, Addr or DSN keyword, when the login
// is given both in the string and as options, when no SQL Server driver is installed, when
// FreeTDS cannot read a value (one holding "};"), or when an access token comes with another
// way to log in or goes to FreeTDS. Messages name keywords, never values.
DriverConnection BuildDriverConnection(
    std::string_view connection_string, const std::optional<std::string>& user,
    const std::optional<std::string>& password, const std::vector<std::string>& available_drivers,
    const std::optional<std::string>& access_token = std::nullopt);

// Whether a driver name or library path is ODBC Driver 18's ("ODBC Driver 18 for SQL Server",
// ".../libmsodbcsql-18.6.so.2.1").
bool IsMicrosoftDriver18(std::string_view driver);

// Whether a driver name or library path is FreeTDS's ("FreeTDS", "/usr/lib/.../libtdsodbc.so").
bool IsFreeTdsDriver(std::string_view driver);

}  // namespace mssql_cdc::odbc
