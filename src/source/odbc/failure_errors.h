// The engine error (core/errors.h) a classified ODBC failure becomes, with a message that
// says what failed and what the user can do about it: the GRANT a missing permission needs,
// how to recover from a purged range, that a login's user or password is wrong (never
// showing the password).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "source/odbc/diagnostics.h"
#include "source/odbc/failure_kind.h"

namespace mssql_cdc::odbc {

struct FailureContext {
  // What was being done, for the message: "reading the change rows of capture instance 'x'".
  std::string action;
  // The capture instance whose change table (cdc.<ci>_CT) the failed statement reads, if any:
  // permission and missing-object errors then name that table.
  std::optional<std::string> change_table_of;
  // The login name given by the user; may be empty.
  std::string login;
  // The database user the GRANT names (SELECT USER_NAME()); asked only for a permission
  // error, and may return nullopt (the login's name is used then).
  std::function<std::optional<std::string>()> database_user;
  // How many attempts were made, for transient failures that ran out of retries.
  int attempts = 1;
  // The source table ("[schema].[table]") a snapshot statement reads: a permission error
  // then names the GRANT on it.
  std::optional<std::string> source_table;
  // The driver reported the connection lost (OdbcConnection::IsDead).
  bool connection_dead = false;
  // The login is an access token (the accessToken option) rather than a name and password.
  bool access_token = false;
};

// Throws the engine error of `failure`: PermissionError, NotFoundError, DataLossError or
// SourceError.
[[noreturn]] void ThrowEngineError(const OdbcFailure& failure, const FailureContext& context);

// Throws the ConfigError of a connection that requires encryption (`setting`: "Encrypt=yes")
// meeting a server that does not offer it (`details`: what the client reported).
[[noreturn]] void ThrowEncryptionUnavailable(const std::string& server, const std::string& setting,
                                             const std::string& details);

// `name` as a bracketed identifier for a statement shown to the user ("a]b" -> "[a]]b]").
std::string Bracketed(std::string_view name);

}  // namespace mssql_cdc::odbc
