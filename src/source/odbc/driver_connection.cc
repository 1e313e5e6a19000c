#include "source/odbc/driver_connection.h"

#include <algorithm>

#include "core/errors.h"
#include "core/options.h"
#include "source/odbc/connection_string.h"

namespace mssql_cdc::odbc {
namespace {

constexpr std::string_view kServerKeywords[] = {"Server", "Address", "Addr"};
constexpr int kLargePacketSize = 32767;

bool Installed(const std::vector<std::string>& drivers, std::string_view name) {
  return std::any_of(drivers.begin(), drivers.end(),
                     [&](const std::string& d) { return SameKeyword(d, name); });
}

// The driver to use when the string names none: Driver 18 registered with unixODBC, or as a
// library path (mssql-python-odbc's, bundled_driver.h), else FreeTDS.
std::string ChooseDriver(const std::vector<std::string>& available) {
  if (Installed(available, kMicrosoftDriver18)) return std::string(kMicrosoftDriver18);
  for (const auto& driver : available) {
    if (IsMicrosoftDriver18(driver)) return driver;
  }
  if (Installed(available, kFreeTdsDriver)) return std::string(kFreeTdsDriver);
  std::string listed;
  for (const auto& d : available) listed += (listed.empty() ? "" : ", ") + d;
  throw ConfigError(
      "no SQL Server ODBC driver is installed (unixODBC lists " +
      (listed.empty() ? std::string("none") : listed) + "): pip install mssql-python-odbc "
      "(Microsoft ODBC Driver 18, which the mssql-cdc wheel depends on), install '" +
      std::string(kMicrosoftDriver18) + "' (msodbcsql18) or FreeTDS (tdsodbc), or name an "
      "installed driver with Driver={...} in connectionString");
}

std::string StripTcpPrefix(std::string_view server) {
  if (server.size() > 4 && AsciiLower(server.substr(0, 4)) == "tcp:") server.remove_prefix(4);
  return std::string(server);
}

// Microsoft's Encrypt values in FreeTDS's Encryption words.
std::string FreeTdsEncryption(std::string_view encrypt) {
  const std::string word = AsciiLower(encrypt);
  if (word == "no" || word == "false" || word == "optional") return "off";
  if (word == "strict") {
    // Read as "require" it would silently be TDS 7.x TLS, which strict means to rule out.
    throw ConfigError(
        "Encrypt=strict (TDS 8.0, TLS before any TDS) needs ODBC Driver 18; the FreeTDS driver "
        "chosen here cannot do it. Name Driver 18 (Driver={ODBC Driver 18 for SQL Server}, or "
        "pip install mssql-python-odbc and give its library's path), or use Encrypt=yes");
  }
  return "require";  // yes, true, mandatory
}

// FreeTDS takes the port in its own keyword and knows neither Encrypt nor
// TrustServerCertificate (it does not check certificates unless freetds.conf says so).
void TranslateForFreeTds(ConnectionString& cs) {
  for (std::string_view keyword : kServerKeywords) {
    const auto value = cs.Get(keyword);
    if (!value) continue;
    std::string server = StripTcpPrefix(*value);
    const auto comma = server.rfind(',');
    if (comma != std::string::npos) {
      const std::string port = server.substr(comma + 1);
      server.resize(comma);
      if (!cs.Has("Port")) cs.Set("Port", port);
    }
    if (keyword != "Server") cs.Remove(keyword);  // Address and Addr become Server
    cs.Set("Server", server);
    break;
  }
  if (!cs.Has("TDS_Version")) cs.Set("TDS_Version", "7.4");
  if (const auto encrypt = cs.Get("Encrypt")) {
    cs.Remove("Encrypt");
    if (!cs.Has("Encryption")) cs.Set("Encryption", FreeTdsEncryption(*encrypt));
  }
  cs.Remove("TrustServerCertificate");
  if (!cs.Has("ClientCharset")) cs.Set("ClientCharset", "UTF-8");
  // FreeTDS takes the packet size from its keyword only (not SQL_ATTR_PACKET_SIZE).
  if (!cs.Has("PacketSize")) cs.Set("PacketSize", std::to_string(kLargePacketSize));
}

bool IsRequired(std::string_view encrypt) {
  const std::string word = AsciiLower(encrypt);
  return word == "yes" || word == "true" || word == "mandatory" || word == "strict" ||
         word == "require";
}

// Whether the connection refuses a server that does not encrypt, and what asked for it.
void NoteEncryption(const ConnectionString& cs, DriverConnection& out) {
  if (const auto encrypt = cs.Get("Encrypt")) {
    out.requires_encryption = IsRequired(*encrypt);
    out.encryption_setting = "Encrypt=" + *encrypt;
  } else if (const auto encryption = cs.Get("Encryption")) {
    out.requires_encryption = IsRequired(*encryption);
    out.encryption_setting = "Encryption=" + *encryption;
  } else if (IsMicrosoftDriver18(out.driver)) {
    out.requires_encryption = true;
    out.encryption_setting = "no Encrypt keyword, and ODBC Driver 18 encrypts by default";
  }
}

// "host,port", or host with FreeTDS's Port keyword or alone (1433); a named instance
// (host\name) leaves the port to the SQL Server Browser, so it is not known here.
void NoteAddress(const ConnectionString& cs, const std::string& server, DriverConnection& out) {
  std::string host = server;
  std::string port_text = cs.Get("Port").value_or("1433");
  if (const auto comma = host.rfind(','); comma != std::string::npos) {
    port_text = host.substr(comma + 1);
    host.resize(comma);
  } else if (host.find('\\') != std::string::npos) {
    return;
  }
  int port = 0;
  try {
    std::size_t used = 0;
    port = std::stoi(port_text, &used);
    if (used != port_text.size()) return;
  } catch (const std::exception&) {
    return;
  }
  // "tcp:" is the one protocol prefix that names a TCP address; "np:", "lpc:", "admin:",
  // "(local)" and "." are for the driver to resolve.
  host = StripTcpPrefix(host);
  if (host.find(':') != std::string::npos || host == "." || AsciiLower(host) == "(local)") return;
  if (host.empty() || port <= 0 || port > 65535) return;
  out.host = host;
  out.port = port;
}

// Driver 18 refuses a token beside any other way to log in, with a message that does not say
// which; here it is named before connecting.
void UseAccessToken(const ConnectionString& cs, const std::string& token, DriverConnection& out) {
  for (std::string_view keyword : {"UID", "PWD", "Authentication", "Trusted_Connection"}) {
    if (cs.Has(keyword)) {
      throw ConfigError("connectionString has " + std::string(keyword) +
                        " and the accessToken option is set: an access token logs in on its "
                        "own; remove " + std::string(keyword) + " from connectionString, or "
                        "the accessToken option");
    }
  }
  if (out.freetds) {
    throw ConfigError(
        "the accessToken option needs ODBC Driver 18; the FreeTDS driver chosen here cannot log "
        "in with an access token. Name Driver 18 (Driver={ODBC Driver 18 for SQL Server}, or "
        "pip install mssql-python-odbc and give its library's path)");
  }
  out.access_token = token;
  out.secrets.push_back(token);
}

}  // namespace

bool IsMicrosoftDriver18(std::string_view driver) {
  const std::string lowered = AsciiLower(driver);
  return lowered.find("odbc driver 18") != std::string::npos ||
         lowered.find("msodbcsql-18") != std::string::npos ||
         lowered.find("msodbcsql18") != std::string::npos;
}


bool IsFreeTdsDriver(std::string_view driver) {
  const std::string lowered = AsciiLower(driver);
  return lowered.find("freetds") != std::string::npos ||
         lowered.find("libtdsodbc") != std::string::npos;
}

DriverConnection BuildDriverConnection(
    std::string_view connection_string, const std::optional<std::string>& user,
    const std::optional<std::string>& password, const std::vector<std::string>& available_drivers,
    const std::optional<std::string>& access_token) {
  ConnectionString cs = ConnectionString::Parse(connection_string);
  DriverConnection out;

  std::optional<std::string> server;
  for (std::string_view keyword : {"Server", "Address", "Addr", "DSN"}) {
    if ((server = cs.Get(keyword))) break;
  }
  if (!server || server->empty()) {
    throw ConfigError(
        "connectionString has no Server keyword: add Server=host,port (e.g. "
        "Server=sqlhost,1433;Database=sales), or DSN=name for a configured data source");
  }
  out.server = StripTcpPrefix(*server);

  if ((user || password) && (cs.Has("UID") || cs.Has("PWD"))) {
    throw ConfigError(
        "the login is given twice: connectionString has UID or PWD and the user or password "
        "option is set; keep the login in one place (preferably the user and password "
        "options)");
  }
  if (password && !user) {
    throw ConfigError("option password is set without option user: give the login name too");
  }
  if (const auto uid = cs.Get("UID")) out.login = *uid;
  if (const auto pwd = cs.Get("PWD"); pwd && !pwd->empty()) out.secrets.push_back(*pwd);

  if (const auto driver = cs.Get("Driver")) {
    out.driver = *driver;
  } else if (!cs.Has("DSN")) {
    out.driver = ChooseDriver(available_drivers);
    // First, as drivers and unixODBC expect it.
    ConnectionString with_driver;
    with_driver.Set("Driver", out.driver);
    for (const auto& keyword : cs.keywords()) with_driver.Set(keyword.name, keyword.value);
    cs = std::move(with_driver);
  }
  NoteEncryption(cs, out);
  if (!cs.Has("DSN")) NoteAddress(cs, out.server, out);
  if (!out.driver.empty() && IsFreeTdsDriver(out.driver)) {
    out.freetds = true;
    TranslateForFreeTds(cs);
  }

  if (access_token) UseAccessToken(cs, *access_token, out);
  if (user) {
    out.login = *user;
    cs.Set("UID", *user);
    if (password) {
      cs.Set("PWD", *password);
      out.secrets.push_back(*password);
    }
  }
  out.sets_packet_size = out.freetds || cs.Has("PacketSize") || cs.Has("Packet Size");
  out.utf8_char_data = out.freetds && AsciiLower(cs.Get("ClientCharset").value_or("")) == "utf-8";
  out.text = cs.ToString(out.freetds ? BraceStyle::kFreeTds : BraceStyle::kOdbc);
  return out;
}

}  // namespace mssql_cdc::odbc
