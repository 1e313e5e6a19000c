// One client connection's conversation: PRELOGIN (and TLS, as the client and the server's
// certificate agree: none, the login only, everything, or from the first byte), LOGIN7, then
// requests until the client
// leaves, idles past the timeout, or breaks the protocol. Before login a client may send
// little (kMaxLoginMessageBytes a message) for a short time (login_timeout_seconds), so that
// unauthenticated connections hold neither memory nor a thread for long.
//
// A login goes to QueryHandlerFactory::Login; a refused one is answered with error 18456
// and the connection closes. After login every SQL batch, RPC, transaction-manager request
// and Attention is answered with exactly one reply message. The session owns the
// connection's state: its QueryHandler, prepared statements, transaction descriptor and
// packet size. It never throws: whatever ends it is logged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tds/message_writer.h"
#include "tds/query_handler.h"
#include "tds/rpc_runner.h"
#include "tds/socket_channel.h"
#include "tds/token_stream.h"
#include "tls/server_identity.h"

namespace mssql_cdc::tds {

struct SessionOptions {
  std::uint16_t spid = 51;
  // PRELOGIN and LOGIN7 must have arrived within this long of the connection (0: no limit).
  int login_timeout_seconds = 10;
  bool log_requests = false;
  std::string peer;  // "127.0.0.1:53122", for logs
  // The server's certificate: without one, PRELOGIN answers that it does not encrypt.
  std::shared_ptr<const tls::ServerIdentity> tls;
  bool force_encryption = false;  // with tls: every connection encrypted, or refused
};

class Session {
 public:
  Session(SocketChannel& channel, QueryHandlerFactory& factory, SessionOptions options);

  void Run();

 private:
  bool Handshake();
  bool Login(const Message& message);
  void HandleSqlBatch(const Message& message);
  void HandleRpc(const Message& message);
  void HandleTransaction(const Message& message);
  void AnswerAttention();
  // An error for a request that could not be parsed; the connection stays usable.
  void RejectRequest(const std::string& why);

  SocketChannel& channel_;
  QueryHandlerFactory& factory_;
  const SessionOptions options_;
  MessageWriter writer_;
  TokenStream stream_;
  std::string server_name_;
  bool fed_auth_offered_ = false;  // the PRELOGIN reply held FEDAUTHREQUIRED=1
  std::unique_ptr<QueryHandler> handler_;
  std::unique_ptr<RpcRunner> rpc_;
  bool use_nbcrow_ = true;
  std::uint64_t transaction_ = 0;  // the open transaction's descriptor; 0: none
  std::uint64_t next_transaction_ = 1;
};

}  // namespace mssql_cdc::tds
