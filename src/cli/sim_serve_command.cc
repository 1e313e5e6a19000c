// `mssql-cdc sim serve`, `sim login add` and `sim grant`: a simulated database behind a TDS
// endpoint, for the odbc backend and its drivers, and the logins that may connect to it.
// With --tls-cert and --tls-key it encrypts as SQL Server does with a certificate.
// `serve` prints one line, "listening on <address>:<port>", once it accepts connections (so
// that `--port 0` can be used by scripts), and runs until SIGINT or SIGTERM, then closes every
// connection and exits 0.
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "core/errors.h"
#include "sim/capture_job.h"
#include "sim/database.h"
#include "sim_server/sim_handler_factory.h"
#include "tds/server.h"
#include "tls/server_identity.h"

namespace mssql_cdc::cli {
namespace {

// Blocks SIGINT and SIGTERM in this thread and every thread it starts from now on, so that
// they wait for WaitForStopSignal instead of ending the process mid-reply.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void WaitForStopSignal(const sigset_t& signals) {
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  spdlog::info("sim serve: {} received, stopping", received == SIGINT ? "SIGINT" : "SIGTERM");
}

void AddServe(CLI::App& sim) {
  struct Args {
    std::string db, listen = "127.0.0.1";
    int port = 1433;
    bool log_requests = false;
    int max_connections = tds::ServerOptions{}.max_connections;
    int login_timeout = tds::ServerOptions{}.login_timeout_seconds;
    int idle_timeout = tds::ServerOptions{}.idle_timeout_seconds;
    std::string tls_cert, tls_key;
    bool force_encryption = false;
    std::int64_t send_kib_per_second = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand(
      "serve", "Answer the odbc backend's T-SQL over TDS from a simulated database");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--listen", args->listen, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", args->port, "TCP port; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_flag("--log-requests", args->log_requests,
                "Log every request's statement text (never a password)");
  cmd->add_option("--max-connections", args->max_connections,
                  "Connections served at once; more are closed as they arrive")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  cmd->add_option("--login-timeout", args->login_timeout,
                  "Seconds a connection may take to log in before it is closed (0: no limit)")
      ->check(CLI::Range(0, 3'600))
      ->capture_default_str();
  cmd->add_option("--idle-timeout", args->idle_timeout,
                  "Seconds a logged-in connection may stay silent before it is closed (0: no "
                  "limit)")
      ->check(CLI::Range(0, 86'400))
      ->capture_default_str();
  auto* cert = cmd->add_option("--tls-cert", args->tls_cert,
                               "PEM certificate (and its chain) to encrypt connections with; "
                               "`sim tls-cert` makes one");
  auto* key = cmd->add_option("--tls-key", args->tls_key, "PEM private key of --tls-cert");
  cert->needs(key);
  key->needs(cert);
  cmd->add_option("--send-kib-per-second", args->send_kib_per_second,
                  "Send at most this many KiB a second on each connection, as a slow network "
                  "would (0: no limit)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_flag("--force-encryption", args->force_encryption,
                "Encrypt every connection and refuse clients that cannot (needs --tls-cert)")
      ->needs(cert);
  cmd->callback([args] {
    // stdout carries the one "listening on" line a script waits for; logs go to stderr.
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "mssql-cdc", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
    std::shared_ptr<const tls::ServerIdentity> identity;
    if (!args->tls_cert.empty()) {
      identity = tls::ServerIdentity::Load(args->tls_cert, args->tls_key);
    }
    auto factory = std::make_shared<sim_server::SimHandlerFactory>(args->db);
    const sigset_t signals = BlockStopSignals();
    tds::ServerOptions options;
    options.listen_address = args->listen;
    options.port = args->port;
    options.log_requests = args->log_requests;
    options.max_connections = args->max_connections;
    options.login_timeout_seconds = args->login_timeout;
    options.idle_timeout_seconds = args->idle_timeout;
    options.tls = identity;
    options.force_encryption = args->force_encryption;
    options.send_bytes_per_second = args->send_kib_per_second * 1024;
    tds::TdsServer server(factory, options);
    const sim::CaptureJob capture_job(args->db);  // idle entries while the database is quiet
    std::cout << "listening on " << args->listen << ":" << server.port() << std::endl;
    WaitForStopSignal(signals);
    server.Stop();
  });
}

// The value of the environment variable an option names; throws ConfigError when unset.
std::string FromEnvironment(const std::string& option, const std::string& variable,
                            const std::string& alternative) {
  const char* value = std::getenv(variable.c_str());
  if (value == nullptr) {
    throw ConfigError(option + " names " + variable + ", which is not set: export it" +
                      alternative);
  }
  return value;
}

void AddLogin(CLI::App& sim) {
  struct Args {
    std::string db, name, password, password_env, token_env;
    bool db_owner = false;
  };
  auto args = std::make_shared<Args>();
  auto* login = sim.add_subcommand("login", "Logins that may connect to `sim serve`");
  login->require_subcommand(1);
  auto* cmd = login->add_subcommand("add", "Add a login");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--name", args->name, "Login name")->required();
  auto* from_env = cmd->add_option("--password-env", args->password_env,
                                   "Name of the environment variable holding the password");
  auto* given = cmd->add_option("--password", args->password,
                                "The password (visible to other users of the machine: prefer "
                                "--password-env)");
  auto* token = cmd->add_option(
      "--token-env", args->token_env,
      "Name of the environment variable holding an access token: the login connects with it "
      "(the accessToken option) instead of a password, as an Entra ID login does");
  from_env->excludes(given);
  token->excludes(from_env)->excludes(given);
  cmd->add_flag("--db-owner", args->db_owner,
                "A db owner reads everything; other logins need `sim grant`");
  cmd->callback([args] {
    if (!args->token_env.empty()) {
      const std::string access_token = FromEnvironment("--token-env", args->token_env, "");
      auto db = sim::SimDatabase::Open(args->db);
      db->AddTokenLogin(args->name, access_token, args->db_owner);
      std::cout << "added token login " << args->name << (args->db_owner ? " (db owner)" : "")
                << "\n";
      return;
    }
    std::string password = args->password;
    if (!args->password_env.empty()) {
      password = FromEnvironment("--password-env", args->password_env, ", or give --password");
    } else if (password.empty()) {
      throw ConfigError("login " + args->name + " needs a password or a token: give "
                        "--password-env VAR, --password P or --token-env VAR");
    }
    auto db = sim::SimDatabase::Open(args->db);
    db->AddLogin(args->name, password, args->db_owner);
    std::cout << "added login " << args->name << (args->db_owner ? " (db owner)" : "") << "\n";
  });
}

void AddGrant(CLI::App& sim) {
  struct Args {
    std::string db, login, object;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand("grant", "GRANT SELECT on a change table or source table");
  cmd->add_option("--db", args->db, "The database file")->required();
  cmd->add_option("--login", args->login, "Login name")->required();
  cmd->add_option("--object", args->object, "cdc.<capture_instance>_CT or schema.table")
      ->required();
  cmd->callback([args] {
    auto db = sim::SimDatabase::Open(args->db);
    const std::string object = db->Grant(args->login, args->object);
    std::cout << "granted SELECT on " << object << " to " << args->login << "\n";
  });
}

}  // namespace

void AddSimServeCommands(CLI::App& app) {
  CLI::App* sim = app.get_subcommand("sim");
  AddServe(*sim);
  AddLogin(*sim);
  AddGrant(*sim);
  AddSimTlsCommand(*sim);
}

}  // namespace mssql_cdc::cli
