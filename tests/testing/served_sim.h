// A sim database served over TDS inside the test process, for tests that read it through the
// odbc backend and the real unixODBC + FreeTDS stack: a login is added to the file, a
// TdsServer with the sim_server factory listens on an ephemeral port, and Options() gives the
// source options that reach it. The server stops when the object is destroyed.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "core/options.h"
#include "sim/database.h"
#include "sim_server/sim_handler_factory.h"
#include "tds/server.h"
#include "tests/testing/test_certificates.h"

namespace mssql_cdc::testing {

// The ODBC driver the tests connect through: FreeTDS by default (what this machine has
// registered); another one, such as Microsoft's ODBC Driver 18 given by its library path,
// through MSSQL_CDC_TEST_ODBC_DRIVER. "Driver={...};" or "".
inline std::string DriverKeyword() {
  const char* driver = std::getenv("MSSQL_CDC_TEST_ODBC_DRIVER");
  return driver != nullptr && *driver != '\0' ? "Driver={" + std::string(driver) + "};" : "";
}

// Whether the server encrypts and the connection string asks for it, as production
// connections do: MSSQL_CDC_TEST_TLS=1. The connection string is then the seed's
// (Server=localhost,<port>;Database=...;Encrypt=yes), with the test CA trusted the way a
// private CA is: SSL_CERT_FILE names it for the driver's OpenSSL.
inline bool TlsUnderTest() {
  const char* tls = std::getenv("MSSQL_CDC_TEST_TLS");
  return tls != nullptr && std::string(tls) == "1";
}

// The test CA and the server's certificate for "localhost", made once per process.
inline const CertificateFiles& TestServerCertificates() {
  static const CertificateFiles* files = [] {
    auto* made = new CertificateFiles("localhost");
    ::setenv("SSL_CERT_FILE", made->ca_file().c_str(), 1);
    return made;
  }();
  return *files;
}

// How the odbc backend reads change rows in these tests: its own TDS reader by default
// (changeReader=auto), or through the ODBC driver when MSSQL_CDC_TEST_CHANGE_READER=driver.
inline std::string ChangeReaderUnderTest() {
  const char* reader = std::getenv("MSSQL_CDC_TEST_CHANGE_READER");
  return reader != nullptr && *reader != '\0' ? reader : "auto";
}

// Server connections one open odbc source holds: one through the driver for catalog and LSN
// questions and, with the engine's TDS reader, one of its own for change rows.
inline int ConnectionsPerSource() { return ChangeReaderUnderTest() == "driver" ? 1 : 2; }

class ServedSim {
 public:
  static constexpr char kUser[] = "cdc_reader";
  static constexpr char kPassword[] = "Test-pw-1!";

  // Adds kUser (a db owner) to the database at `path` unless it exists, and serves it, with
  // the test certificate for "localhost" when `tls`, sending at most `send_bytes_per_second`
  // on each connection when it is not 0.
  explicit ServedSim(const std::string& path, bool tls = TlsUnderTest(),
                     std::int64_t send_bytes_per_second = 0)
      : path_(path), tls_(tls), send_bytes_per_second_(send_bytes_per_second) {
    {
      auto db = sim::SimDatabase::Open(path);
      if (!db->Authenticate(kUser, kPassword)) db->AddLogin(kUser, kPassword, true);
      database_ = db->database_name();
    }
    Start();
  }

  // Serves, on the port served before when there was one.
  void Start() {
    tds::ServerOptions options;
    options.port = port_;
    if (tls_) options.tls = TestServerCertificates().Identity();
    options.send_bytes_per_second = send_bytes_per_second_;
    factory_ = std::make_shared<sim_server::SimHandlerFactory>(path_);
    server_ = std::make_unique<tds::TdsServer>(factory_, options);
    port_ = server_->port();
  }
  // Stops serving: every connection drops, and the port refuses new ones until Start.
  void Stop() {
    server_->Stop();
    server_.reset();
  }
  // Stops serving (every connection drops) and serves again on the same port.
  void Restart() {
    Stop();
    Start();
  }

  int port() const { return port_; }
  // Logins the server accepted since it last started.
  int logins() const { return factory_->logins(); }
  tds::TdsServer& server() { return *server_; }

  std::string ConnectionString() const {
    if (tls_) {
      return DriverKeyword() + "Server=localhost," + std::to_string(port_) + ";Database=" +
             database_ + ";Encrypt=yes";
    }
    return DriverKeyword() + "Server=127.0.0.1," + std::to_string(port_) + ";Database=" +
           database_ + ";Encrypt=no";
  }
  // backend=odbc options reaching this server as kUser.
  Options SourceOptionsText() const {
    return Options{{"backend", "odbc"},
                   {"connectionString", ConnectionString()},
                   {"user", kUser},
                   {"password", kPassword},
                   {"changeReader", ChangeReaderUnderTest()}};
  }

 private:
  std::string path_;
  bool tls_;
  std::int64_t send_bytes_per_second_;
  std::string database_;
  int port_ = 0;
  std::shared_ptr<sim_server::SimHandlerFactory> factory_;
  std::unique_ptr<tds::TdsServer> server_;
};

}  // namespace mssql_cdc::testing
