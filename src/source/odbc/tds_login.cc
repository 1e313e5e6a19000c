#include "source/odbc/tds_login.h"

#include "source/odbc/connection_string.h"
#include "tls/client_context.h"

namespace mssql_cdc::odbc {
namespace {

// The keywords whose meaning the engine's reader honours or that change nothing it does.
constexpr std::string_view kUnderstood[] = {
    "Driver",  "Server",      "Address",  "Addr",        "Port",
    "Database", "UID",        "PWD",      "Encrypt",     "Encryption",
    "TrustServerCertificate", "HostNameInCertificate",   "ServerCertificate", "TDS_Version",
    "ClientCharset", "PacketSize", "Packet Size", "APP",  "WSID",
};

bool Understood(std::string_view keyword) {
  for (std::string_view known : kUnderstood) {
    if (SameKeyword(keyword, known)) return true;
  }
  return false;
}

TdsLoginChoice No(std::string reason) { return TdsLoginChoice{std::nullopt, std::move(reason)}; }

bool Is(const std::optional<std::string>& value, std::initializer_list<std::string_view> words) {
  if (!value) return false;
  for (std::string_view word : words) {
    if (SameKeyword(*value, word)) return true;
  }
  return false;
}

// Driver 18's encryption for the string (decision 0020): Encrypt (default yes; the values the
// driver takes, case ignored), TrustServerCertificate, HostNameInCertificate, and
// ServerCertificate in strict mode. An empty reason: understood.
std::string ChooseEncryption(const ConnectionString& cs, const std::string& host,
                             tds::ClientLogin* login) {
  using Encrypt = tds::ClientLogin::Encrypt;
  using Check = tls::CertificateRules::Check;
  const auto encrypt = cs.Get("Encrypt");
  if (!encrypt || Is(encrypt, {"yes", "mandatory"})) {
    login->encrypt = Encrypt::kYes;
  } else if (Is(encrypt, {"no", "optional"})) {
    login->encrypt = Encrypt::kNo;
  } else if (Is(encrypt, {"strict"})) {
    login->encrypt = Encrypt::kStrict;
  } else {
    return "the Encrypt value is not one ODBC Driver 18 takes (yes, mandatory, no, optional, "
           "strict)";
  }
  const auto trust = cs.Get("TrustServerCertificate");
  if (trust && !Is(trust, {"yes", "no"})) {
    return "the TrustServerCertificate value is not one ODBC Driver 18 takes (yes, no)";
  }
  const bool strict = login->encrypt == Encrypt::kStrict;
  tls::CertificateRules rules;
  const auto pinned = cs.Get("ServerCertificate");
  const auto name = cs.Get("HostNameInCertificate");
  rules.expected_host = name && !name->empty() ? *name : host;
  // Strict mode checks whatever TrustServerCertificate says; ServerCertificate counts only there.
  if (strict && pinned && !pinned->empty()) {
    rules.check = Check::kPinned;
    rules.pinned_file = *pinned;
  } else if (!strict && Is(trust, {"yes"})) {
    rules.check = Check::kNone;
  }
  login->tls = tls::ClientContext::Make(rules, strict);
  if (login->encrypt == Encrypt::kNo) {
    login->login_only_tls = tls::ClientContext::Make(tls::CertificateRules{Check::kNone, "", ""},
                                                     /*strict=*/false);
  }
  return "";
}

}  // namespace

TdsLoginChoice TdsLoginFor(const SourceOptions& options, const DriverConnection& driver) {
  const ConnectionString cs = ConnectionString::Parse(options.connection_string);
  if (cs.Has("DSN")) return No("the connection string names a DSN");
  for (const auto& keyword : cs.keywords()) {
    if (!Understood(keyword.name)) {
      return No("the connection string sets " + keyword.name + ", which only the driver reads");
    }
  }
  if (driver.host.empty()) return No("the server is not named by a TCP host and port");
  if (driver.freetds && driver.requires_encryption) {
    return No("the connection is encrypted through FreeTDS (" + driver.encryption_setting +
              "), whose certificate checks freetds.conf sets");
  }
  if (!driver.freetds && !IsMicrosoftDriver18(driver.driver)) {
    return No("the connection names the driver " + driver.driver +
              ", and the reader encrypts as ODBC Driver 18 does");
  }
  tds::ClientLogin login;
  if (options.access_token) {
    login.access_token = options.access_token;
  } else {
    login.user = options.user ? *options.user : cs.Get("UID").value_or("");
    login.password = options.password ? *options.password : cs.Get("PWD").value_or("");
    if (login.user.empty() || login.password.empty()) {
      return No("the login is not a SQL Server login with a password or an access token");
    }
  }
  login.host = driver.host;
  login.port = driver.port;
  login.database = cs.Get("Database").value_or("");
  if (driver.freetds) {
    // FreeTDS with encryption off sends the login as it is, and so does the reader.
    if (const auto encryption = cs.Get("Encryption"); Is(encryption, {"request"})) {
      return No("the connection asks FreeTDS to encrypt the login (Encryption=request)");
    }
    login.encrypt = tds::ClientLogin::Encrypt::kNever;
  } else if (std::string why = ChooseEncryption(cs, driver.host, &login); !why.empty()) {
    return No(why);
  }
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
