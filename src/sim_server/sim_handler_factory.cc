#include "sim_server/sim_handler_factory.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "core/errors.h"
#include "sim/access_token.h"
#include "sim/catalog.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "sim_server/session.h"
#include "sim_server/sim_query_handler.h"
#include "sim_server/sql_tokens.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc::sim_server {

SimHandlerFactory::SimHandlerFactory(std::string path) : path_(std::move(path)) {
  OpenSimSource(path_);  // refuses a file that is not a sim database, saying how to make one
  auto db = sim::SqliteDb::OpenReadOnly(path_);
  database_name_ = sim::Catalog(*db).RequireMeta(sim::kMetaDatabaseName);
}

std::string SimHandlerFactory::ServerName() { return std::string(kSimServerName); }

tds::LoginOutcome SimHandlerFactory::Login(const tds::LoginCredentials& credentials,
                                           const std::string& database) {
  // A token's holder is named by its login in logs, never by the token.
  const std::string user =
      credentials.access_token ? std::string("<access token>") : credentials.user;
  std::optional<sim::LoginInfo> login;
  try {
    auto db = sim::SqliteDb::OpenReadOnly(path_);
    sim::Catalog catalog(*db);
    login = credentials.access_token
                ? catalog.AuthenticateToken(sim::AccessTokenDigest(*credentials.access_token))
                : catalog.Authenticate(credentials.user, credentials.password);
  } catch (const Error& e) {
    spdlog::error("sim serve: cannot check the login of '{}' in {}: {}", user, path_, e.what());
    return {};
  }
  if (!login) {
    spdlog::debug("sim serve: no login '{}' with that {}", user,
                  credentials.access_token ? "token" : "password");
    return {};
  }
  if (credentials.access_token) {
    const auto expiry = sim::AccessTokenExpiry(*credentials.access_token);
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    if (expiry && *expiry <= now) {
      spdlog::info("sim serve: the access token of login '{}' expired {} s ago", login->name,
                   now - *expiry);
      return {nullptr, "Token is expired."};
    }
  }
  if (!database.empty() && !EqualsIgnoringCase(database, database_name_)) {
    spdlog::warn("sim serve: login '{}' asked for database '{}'; this server has only '{}'",
                 login->name, database, database_name_);
    return {};
  }
  try {
    auto session = std::make_unique<Session>(path_, database_name_, *login, next_spid_++);
    spdlog::info("sim serve: login '{}'{} connected", login->name,
                 login->is_db_owner ? " (db owner)" : "");
    return {std::make_unique<SimQueryHandler>(std::move(session)), ""};
  } catch (const Error& e) {
    spdlog::error("sim serve: cannot open {} for login '{}': {}", path_, login->name, e.what());
    return {};
  }
}

}  // namespace mssql_cdc::sim_server
