// `mssql-cdc sim tls-cert`: a test CA and a server certificate it signed for one host name,
// written as PEM files for `sim serve --tls-cert/--tls-key` and for the clients that are to
// trust the CA (ODBC Driver 18 through SSL_CERT_FILE or ServerCertificate=, FreeTDS through
// its "ca file"). Files that exist already are never overwritten.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/errors.h"
#include "tls/test_authority.h"

namespace mssql_cdc::cli {
namespace {

constexpr char kCaFile[] = "ca.pem";
constexpr char kCertificateFile[] = "server.pem";
constexpr char kKeyFile[] = "server.key";

void WriteFile(const std::filesystem::path& path, const std::string& text, bool secret) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw ConfigError("cannot write " + path.string());
  if (secret) std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                                     std::filesystem::perms::owner_write);
  out << text;
  if (!out.flush()) throw ConfigError("cannot write " + path.string());
}

}  // namespace

void AddSimTlsCommand(CLI::App& sim) {
  struct Args {
    std::string host = "localhost", out_dir;
    int days = 365;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = sim.add_subcommand(
      "tls-cert",
      "Make a test CA and a server certificate for `sim serve --tls-cert` (ca.pem, server.pem, "
      "server.key)");
  cmd->add_option("--host", args->host,
                  "The name clients connect to (Server=...): a DNS name or an IP address")
      ->capture_default_str();
  cmd->add_option("--out-dir", args->out_dir, "Directory for the three files")->required();
  cmd->add_option("--days", args->days, "Days the certificates are valid from now")
      ->check(CLI::Range(1, 3650))
      ->capture_default_str();
  cmd->callback([args] {
    const std::filesystem::path dir(args->out_dir);
    for (const char* name : {kCaFile, kCertificateFile, kKeyFile}) {
      if (std::filesystem::exists(dir / name)) {
        throw ConfigError((dir / name).string() +
                          " exists already: choose another --out-dir, or remove the files");
      }
    }
    tls::TestCertificateRequest request;
    request.host = args->host;
    // A minute back, so a client whose clock is a little behind accepts it at once.
    request.not_before = std::chrono::system_clock::now() - std::chrono::minutes(1);
    request.not_after = std::chrono::system_clock::now() + std::chrono::hours(24 * args->days);
    const tls::TestCertificates made = tls::MakeTestCertificates(request);
    std::filesystem::create_directories(dir);
    WriteFile(dir / kCaFile, made.ca_certificate, false);
    WriteFile(dir / kCertificateFile, made.server_certificate, false);
    WriteFile(dir / kKeyFile, made.server_key, true);
    std::cout << "made a test CA and a certificate for " << args->host << " in " << dir.string()
              << ":\n  " << kCaFile << "     the CA clients are to trust\n  " << kCertificateFile
              << "  for sim serve --tls-cert\n  " << kKeyFile << "  for sim serve --tls-key\n";
  });
}

}  // namespace mssql_cdc::cli
