// The database behind `mssql-cdc sim serve`: checks logins against the sim database's
// sim_logins (or an access token against sim_login_tokens) and gives each connection its own SimQueryHandler, with its own read-only
// connections to the file. The database name is the sim's (sim_meta database_name), the
// server name "mssql-cdc-sim". Safe to share between connection threads: it keeps nothing
// but the path, the name and a session counter.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

class SimHandlerFactory final : public tds::QueryHandlerFactory {
 public:
  // Throws SourceError, saying how to create one, when `path` is not a sim database.
  explicit SimHandlerFactory(std::string path);

  // Refused for an unknown user, a wrong password, an unknown or expired access token, or a
  // database other than the sim's.
  tds::LoginOutcome Login(const tds::LoginCredentials& credentials,
                          const std::string& database) override;
  std::string DatabaseName() override { return database_name_; }
  // Logins accepted so far.
  int logins() const { return next_spid_.load() - kFirstSpid; }
  std::string ServerName() override;

 private:
  std::string path_;
  std::string database_name_;
  // SQL Server's user sessions start above the system ones.
  static constexpr int kFirstSpid = 51;
  std::atomic<int> next_spid_{kFirstSpid};
};

}  // namespace mssql_cdc::sim_server
