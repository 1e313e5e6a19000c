// How the client side of TDS fails: the network, the server's ERROR tokens, encryption the two
// sides cannot agree on, a certificate the client refuses, or bytes that are not TDS. No message
// holds a password or a token.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"

namespace mssql_cdc::tds {

// One ERROR token of the server.
struct ServerMessage {
  std::int32_t number = 0;
  std::uint8_t state = 0;
  std::uint8_t severity = 0;
  std::string message;
};

class ClientFailure : public SourceError {
 public:
  enum class Kind {
    kNetwork,
    kServer,
    kEncryptionRequired,     // the server encrypts where this client may not
    kEncryptionUnavailable,  // the client requires encryption and the server has none
    kCertificateRefused,     // the server's certificate failed the client's check
    kProtocol,
  };
  ClientFailure(Kind kind, std::string message, std::vector<ServerMessage> server = {})
      : SourceError(std::move(message)), kind_(kind), server_(std::move(server)) {}
  Kind kind() const { return kind_; }
  // The server's ERROR tokens, for kServer.
  const std::vector<ServerMessage>& server_messages() const { return server_; }

 private:
  Kind kind_;
  std::vector<ServerMessage> server_;
};

}  // namespace mssql_cdc::tds
