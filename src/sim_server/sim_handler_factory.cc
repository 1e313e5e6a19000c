#include "sim_server/sim_handler_factory.h"

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "sim/catalog.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "sim_server/session.h"
#include "sim_server/sim_query_handler.h"
#include "sim_server/sql_tokens.h"
#include "source/sim_source.h"

namespace mssql_cdc::sim_server {

SimHandlerFactory::SimHandlerFactory(std::string path) : path_(std::move(path)) {
  OpenSimSource(path_);  // refuses a file that is not a sim database, saying how to make one
  auto db = sim::SqliteDb::OpenReadOnly(path_);
  database_name_ = sim::Catalog(*db).RequireMeta(sim::kMetaDatabaseName);
}

std::string SimHandlerFactory::ServerName() { return std::string(kSimServerName); }

std::unique_ptr<tds::QueryHandler> SimHandlerFactory::Login(const std::string& user,
                                                            const std::string& password,
                                                            const std::string& database) {
  std::optional<sim::LoginInfo> login;
  try {
    auto db = sim::SqliteDb::OpenReadOnly(path_);
    login = sim::Catalog(*db).Authenticate(user, password);
  } catch (const Error& e) {
    spdlog::error("sim serve: cannot check the login of '{}' in {}: {}", user, path_, e.what());
    return nullptr;
  }
  if (!login) {
    spdlog::debug("sim serve: no login '{}' with that password", user);
    return nullptr;
  }
  if (!database.empty() && !EqualsIgnoringCase(database, database_name_)) {
    spdlog::warn("sim serve: login '{}' asked for database '{}'; this server has only '{}'",
                 user, database, database_name_);
    return nullptr;
  }
  try {
    auto session = std::make_unique<Session>(path_, database_name_, *login, next_spid_++);
    spdlog::info("sim serve: login '{}'{} connected", login->name,
                 login->is_db_owner ? " (db owner)" : "");
    return std::make_unique<SimQueryHandler>(std::move(session));
  } catch (const Error& e) {
    spdlog::error("sim serve: cannot open {} for login '{}': {}", path_, user, e.what());
    return nullptr;
  }
}

}  // namespace mssql_cdc::sim_server
