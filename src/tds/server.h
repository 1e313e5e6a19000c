// A TDS 7.4 server: listens on a TCP port, speaks PRELOGIN (plaintext without a certificate;
// with one, TLS as MS-TDS describes, and TDS 8.0 strict), LOGIN7, SQL batches, RPCs (sp_executesql, sp_prepexec,
// sp_execute, sp_unprepare, by id or by name), transaction-manager requests and attention,
// and hands every statement to the QueryHandler of its connection (tds/query_handler.h).
//
// One thread per connection, at most max_connections; connections share nothing but the
// factory. A connection that drops, sends garbage, or does not log in quickly with small
// messages is closed alone; the others go on. Stop() closes the listener and
// every connection and joins their threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tds/query_handler.h"
#include "tls/server_identity.h"

namespace mssql_cdc::tds {

struct ServerOptions {
  std::string listen_address = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port, see TdsServer::port()
  // A connection with no request for this long is closed (0: never).
  int idle_timeout_seconds = 600;
  // A connection that has not logged in this long after it was accepted is closed (0: never).
  int login_timeout_seconds = 10;
  // Connections served at once; one more is closed as soon as it is accepted, with a warning.
  int max_connections = 64;
  // Log every request's kind and statement text (never a password) at INFO.
  bool log_requests = false;
  // With a certificate, clients may encrypt (tls/server_identity.h); force_encryption refuses
  // those that will not.
  std::shared_ptr<const tls::ServerIdentity> tls;
  bool force_encryption = false;
  // Each connection sends at most this many bytes a second (0: as fast as it can): a slow
  // network, so that a client's wait for the server's bytes can be seen and measured.
  std::int64_t send_bytes_per_second = 0;
};

class TdsServer {
 public:
  // Binds and starts listening and accepting on a background thread. Throws ConfigError when
  // the address cannot be bound (in use, not local), naming it.
  TdsServer(std::shared_ptr<QueryHandlerFactory> factory, const ServerOptions& options);
  ~TdsServer();  // Stop()
  TdsServer(const TdsServer&) = delete;
  TdsServer& operator=(const TdsServer&) = delete;

  int port() const;
  // Connections open now.
  int connection_count() const;
  // Closes the listener and every connection; joins all threads. Idempotent.
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mssql_cdc::tds
