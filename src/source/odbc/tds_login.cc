#include "source/odbc/tds_login.h"

#include "source/odbc/connection_string.h"

namespace mssql_cdc::odbc {
namespace {

// The keywords whose meaning the engine's reader honours or that change nothing it does.
constexpr std::string_view kUnderstood[] = {
    "Driver",  "Server",      "Address",  "Addr",        "Port",
    "Database", "UID",        "PWD",      "Encrypt",     "Encryption",
    "TrustServerCertificate", "HostNameInCertificate",   "TDS_Version",
    "ClientCharset", "PacketSize", "Packet Size", "APP",  "WSID",
};

bool Understood(std::string_view keyword) {
  for (std::string_view known : kUnderstood) {
    if (SameKeyword(keyword, known)) return true;
  }
  return false;
}

TdsLoginChoice No(std::string reason) { return TdsLoginChoice{std::nullopt, std::move(reason)}; }

}  // namespace

TdsLoginChoice TdsLoginFor(const SourceOptions& options, const DriverConnection& driver) {
  const ConnectionString cs = ConnectionString::Parse(options.connection_string);
  if (cs.Has("DSN")) return No("the connection string names a DSN");
  for (const auto& keyword : cs.keywords()) {
    if (!Understood(keyword.name)) {
      return No("the connection string sets " + keyword.name + ", which only the driver reads");
    }
  }
  if (driver.requires_encryption) {
    return No("the connection is encrypted (" + driver.encryption_setting + ")");
  }
  if (driver.host.empty()) return No("the server is not named by a TCP host and port");
  if (options.access_token) return No("it logs in with an access token");
  tds::ClientLogin login;
  login.user = options.user ? *options.user : cs.Get("UID").value_or("");
  login.password = options.password ? *options.password : cs.Get("PWD").value_or("");
  if (login.user.empty() || login.password.empty()) {
    return No("the login is not a SQL Server login with a password");
  }
  login.host = driver.host;
  login.port = driver.port;
  login.database = cs.Get("Database").value_or("");
  // FreeTDS with encryption off sends the login as it is; Driver 18 encrypts it where the
  // server can, and so the reader must give way there.
  login.encrypt_login_where_offered = !driver.freetds;
  // connectTimeout 0 means no limit; a day stands for it.
  login.timeout = options.connect_timeout_seconds > 0
                      ? std::chrono::milliseconds(std::chrono::seconds(options.connect_timeout_seconds))
                      : std::chrono::milliseconds(std::chrono::hours(24));
  for (std::string_view keyword : {"PacketSize", "Packet Size"}) {
    if (const auto size = cs.Get(keyword)) {
      try {
        const long value = std::stol(*size);
        if (value >= 512 && value <= 32767) login.packet_size = static_cast<std::uint32_t>(value);
      } catch (const std::exception&) {
        // The driver refuses it when it connects; the reader keeps its own size.
      }
    }
  }
  return TdsLoginChoice{std::move(login), ""};
}

}  // namespace mssql_cdc::odbc
