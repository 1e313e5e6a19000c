#include "source/odbc/failure_errors.h"

#include "core/errors.h"

namespace mssql_cdc::odbc {
namespace {

std::string ChangeTable(const std::string& capture_instance) {
  return "cdc." + Bracketed(capture_instance + "_CT");
}

[[noreturn]] void ThrowPermissionDenied(const OdbcFailure& failure, const FailureContext& context) {
  const std::optional<std::string> table = context.change_table_of
                                               ? ChangeTable(*context.change_table_of)
                                               : context.source_table;
  if (!table) {
    throw PermissionError(context.action + " was refused: " + failure.Details() +
                          ". The login needs SELECT on the cdc schema's objects and EXECUTE on "
                          "the sys.sp_cdc_* procedures (db_owner has both)");
  }
  std::optional<std::string> user;
  if (context.database_user) user = context.database_user();
  if (!user || user->empty()) user = context.login;
  const std::string who = user->empty() ? "<user>" : *user;
  throw PermissionError(context.action + " was refused: the login may not read " + *table +
                        " (" + failure.Details() + "). Grant it with: GRANT SELECT ON " + *table +
                        " TO " + Bracketed(who) + ";");
}

}  // namespace

std::string Bracketed(std::string_view name) {
  std::string out = "[";
  for (char c : name) {
    out += c;
    if (c == ']') out += ']';
  }
  return out + "]";
}

void ThrowEngineError(const OdbcFailure& failure, const FailureContext& context) {
  switch (Classify(failure, context.connection_dead)) {
    case FailureKind::kLoginFailed:
      if (context.access_token) {
        throw PermissionError(
            "login with the access token (the accessToken option) failed (" + failure.Details() +
            "): the server refused the token. Entra ID tokens last about an hour, so get a "
            "fresh one for each run (for the resource https://database.windows.net/), and check "
            "that the identity it names is a user of the database");
      }
      throw PermissionError(
          (context.login.empty() ? std::string("login failed")
                                 : "login failed for user '" + context.login + "'") +
          ": check user and password (the user and password options, or UID and PWD in "
          "connectionString), and that the login may connect to the database");
    case FailureKind::kPermissionDenied:
      ThrowPermissionDenied(failure, context);
    case FailureKind::kObjectMissing:
      if (context.change_table_of) {
        throw NotFoundError("the change table " + ChangeTable(*context.change_table_of) +
                            " does not exist (" + failure.Details() + "): capture instance '" +
                            *context.change_table_of + "' was disabled while it was read, or "
                            "never existed; list them with EXEC sys.sp_cdc_help_change_data_capture");
      }
      throw NotFoundError(context.action + " failed: " + failure.Details());
    case FailureKind::kRangePurged:
      throw DataLossError(
          context.action + " failed: the LSN range was purged by CDC cleanup (" +
          failure.Details() + "), so the changes in it are gone. To go on, restart from the "
          "capture instance's current minimum LSN (sys.fn_cdc_get_min_lsn) with "
          "failOnDataLoss=false, which records the gap, or take a new snapshot "
          "(on_data_loss=\"resnapshot\")");
    case FailureKind::kCertificateRefused:
      throw ConfigError(
          context.action + " failed: the server's TLS certificate is not trusted (" +
          failure.Details() + "). Trust the CA that signed it where the driver looks (the "
          "system's certificate store, or a file named by SSL_CERT_FILE), or name the "
          "certificate itself with ServerCertificate=<file> in connectionString; when it was "
          "made for another name than the Server keyword's, add HostNameInCertificate=<that "
          "name>. TrustServerCertificate=yes skips the check: for test servers only");
    case FailureKind::kTransient:
      throw SourceError(context.action + " failed after " + std::to_string(context.attempts) +
                        (context.attempts == 1 ? " attempt: " : " attempts: ") +
                        failure.Details() +
                        (context.connection_dead ? " (the connection to the server was lost)"
                                                 : "") +
                        ". Check that the server is up and reachable (Server keyword, port, "
                        "firewall) and retry");
    case FailureKind::kOther:
      break;
  }
  throw SourceError(context.action + " failed: " + failure.Details());
}

void ThrowEncryptionUnavailable(const std::string& server, const std::string& setting,
                                const std::string& details) {
  throw ConfigError(
      "connecting to " + server + " failed: the connection requires encryption (" + setting +
      ") and the server does not offer it (its PRELOGIN answers ENCRYPT_NOT_SUP; " + details +
      "). For a server without TLS, such as mssql-cdc sim serve, set Encrypt=no in "
      "connectionString; otherwise enable TLS on the server");
}

}  // namespace mssql_cdc::odbc
