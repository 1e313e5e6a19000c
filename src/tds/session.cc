#include "tds/session.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "tds/login7.h"
#include "tds/packet.h"
#include "tds/prelogin.h"
#include "tds/requests.h"
#include "tds/statement_reply.h"
#include "tds/tokens.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::int32_t kLoginFailed = 18456;
constexpr std::int32_t kDatabaseChanged = 5701;
constexpr std::int32_t kLanguageChanged = 5703;
constexpr std::int32_t kProtocolError = 4002;
constexpr std::int32_t kUnsupportedRequest = 50000;

std::string Descriptor(std::uint64_t id) {
  std::string bytes(8, '\0');
  WireBuffer::Store64(reinterpret_cast<std::uint8_t*>(bytes.data()), id);
  return bytes;
}

}  // namespace

Session::Session(SocketChannel& channel, QueryHandlerFactory& factory, SessionOptions options)
    : channel_(channel),
      factory_(factory),
      options_(std::move(options)),
      writer_(channel, options_.spid),
      stream_(writer_) {}

void Session::Run() {
  try {
    if (!Handshake()) return;
    Message message;
    while (true) {
      switch (channel_.ReadMessage(&message)) {
        case SocketChannel::ReadResult::kClosed:
          spdlog::debug("tds: {} disconnected", options_.peer);
          return;
        case SocketChannel::ReadResult::kIdle:
        case SocketChannel::ReadResult::kDeadlinePassed:
          spdlog::info("tds: closing {}: idle past the timeout", options_.peer);
          return;
        case SocketChannel::ReadResult::kMessage:
          break;
      }
      try {
        switch (static_cast<MessageType>(message.type)) {
          case MessageType::kSqlBatch:
            HandleSqlBatch(message);
            break;
          case MessageType::kRpc:
            HandleRpc(message);
            break;
          case MessageType::kTransactionManager:
            HandleTransaction(message);
            break;
          case MessageType::kAttention:
            AnswerAttention();
            break;
          default:
            spdlog::warn("tds: closing {}: unexpected message type {} after login",
                         options_.peer, message.type);
            return;
        }
      } catch (const ReplyAborted& aborted) {
        if (aborted.reason() == ReplyAborted::Reason::kConnectionLost) {
          spdlog::info("tds: {} went away during a reply", options_.peer);
          return;
        }
        // The rows already encoded go out; the Attention's DONE ends the reply.
        AnswerAttention();
      }
    }
  } catch (const ReplyAborted&) {
    spdlog::info("tds: {} went away during a reply", options_.peer);
  } catch (const std::exception& e) {
    spdlog::warn("tds: closing {}: {}", options_.peer, e.what());
  }
}

bool Session::Handshake() {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options_.login_timeout_seconds > 0) {
    deadline = std::chrono::steady_clock::now() +
               std::chrono::seconds(options_.login_timeout_seconds);
  }
  channel_.SetLimits(kMaxLoginMessageBytes, deadline);
  const auto read = [&](Message* message) {
    const auto result = channel_.ReadMessage(message);
    if (result == SocketChannel::ReadResult::kDeadlinePassed) {
      spdlog::warn("tds: closing {}: it did not log in within {} s", options_.peer,
                   options_.login_timeout_seconds);
    }
    return result == SocketChannel::ReadResult::kMessage;
  };
  bool strict = false;
  if (options_.tls != nullptr && channel_.StartsWithTls()) {
    // TDS 8.0: TLS from the first byte, PRELOGIN and everything after it inside.
    channel_.AcceptTls(options_.tls->strict_context(), /*inside_prelogin=*/false);
    strict = true;
    spdlog::debug("tds: {} is encrypted from the start ({})", options_.peer,
                  channel_.tls_protocol());
  }
  Message message;
  if (!read(&message)) return false;
  bool login_only = false;
  if (message.type == static_cast<std::uint8_t>(MessageType::kPrelogin)) {
    const PreloginRequest prelogin = ParsePrelogin(message.payload);
    const EncryptionSetting setting =
        options_.tls == nullptr        ? EncryptionSetting::kUnavailable
        : options_.force_encryption ? EncryptionSetting::kForced
                                    : EncryptionSetting::kAvailable;
    // Inside TLS already, the ENCRYPTION option has nothing left to decide.
    const EncryptionDecision decision =
        strict ? EncryptionDecision{Encryption::kNotSupported,
                                    EncryptionDecision::Outcome::kPlaintext}
               : DecideEncryption(prelogin.encryption, setting);
    fed_auth_offered_ = prelogin.fed_auth_required;
    writer_.buffer().PutBytes(BuildPreloginReply(decision.reply, fed_auth_offered_));
    writer_.EndMessage();
    switch (decision.outcome) {
      case EncryptionDecision::Outcome::kRefuse:
        if (setting == EncryptionSetting::kUnavailable) {
          spdlog::error(
              "tds: refusing {}: the client requires encryption, which this server does not "
              "offer (give sim serve --tls-cert and --tls-key, or connect with encryption off: "
              "FreeTDS Encryption=off, ODBC Driver 18 Encrypt=no)",
              options_.peer);
        } else {
          spdlog::error(
              "tds: refusing {}: the client does not support encryption, which this server "
              "requires (--force-encryption); connect with ODBC Driver 18 Encrypt=yes or "
              "FreeTDS Encryption=require",
              options_.peer);
        }
        return false;
      case EncryptionDecision::Outcome::kLoginOnly:
      case EncryptionDecision::Outcome::kEverything:
        channel_.AcceptTls(options_.tls->tds7_context(), /*inside_prelogin=*/true);
        login_only = decision.outcome == EncryptionDecision::Outcome::kLoginOnly;
        spdlog::debug("tds: {} negotiated {} for {}", options_.peer, channel_.tls_protocol(),
                      login_only ? "the login only" : "the whole connection");
        break;
      case EncryptionDecision::Outcome::kPlaintext:
        break;
    }
    if (!read(&message)) return false;
  }
  if (message.type != static_cast<std::uint8_t>(MessageType::kLogin7)) {
    spdlog::warn("tds: closing {}: expected LOGIN7, got message type {}", options_.peer,
                 message.type);
    return false;
  }
  // The client encrypted its LOGIN7 and reads the answer in plaintext.
  if (login_only) channel_.StopTls();
  return Login(message);
}

bool Session::Login(const Message& message) {
  const Login7Request login = ParseLogin7(message.payload);
  if (login.tds_version < kTds72) {
    spdlog::warn("tds: refusing {}: TDS version {:#010x} is older than 7.2", options_.peer,
                 login.tds_version);
    return false;
  }
  server_name_ = factory_.ServerName();
  LoginCredentials credentials;
  // SQL Server names a token's holder this way in its messages.
  std::string shown_user = login.user_name;
  LoginOutcome outcome;
  const auto& fed_auth = login.federated_authentication;
  if (fed_auth) {
    shown_user = "<token-identified principal>";
    if (fed_auth->echo != fed_auth_offered_) {
      spdlog::warn("tds: refusing {}: its LOGIN7 {} FEDAUTHREQUIRED, which the PRELOGIN reply {}",
                   options_.peer, fed_auth->echo ? "echoes" : "does not echo",
                   fed_auth_offered_ ? "held" : "did not hold");
    } else if (fed_auth->library != FederatedAuthentication::kSecurityToken) {
      spdlog::warn("tds: refusing {}: federated authentication through a library (FEDAUTHINFO "
                   "exchange) is not offered here; log in with an access token",
                   options_.peer);
    } else {
      credentials.access_token = fed_auth->token;
    }
  } else {
    credentials.user = login.user_name;
    credentials.password = login.password;
  }
  if (!fed_auth || credentials.access_token) {
    try {
      outcome = factory_.Login(credentials, login.database);
    } catch (const std::exception& e) {
      spdlog::warn("tds: login of '{}' from {} failed: {}", shown_user, options_.peer, e.what());
      outcome = {};
    }
  }
  if (outcome.handler == nullptr) {
    spdlog::info("tds: login failed for user '{}' from {}{}{}", shown_user, options_.peer,
                 outcome.reason.empty() ? "" : ": ", outcome.reason);
    MessageToken error;
    error.number = kLoginFailed;
    error.state = 1;
    error.severity = 14;
    error.text = "Login failed for user '" + shown_user + "'." +
                 (outcome.reason.empty() ? "" : " " + outcome.reason);
    error.server_name = server_name_;
    error.line = 1;
    WriteError(stream_.Next(), error);
    stream_.Done(DoneToken{token::kDone, done::kError, 0, 0});
    stream_.EndMessage();
    return false;
  }
  handler_ = std::move(outcome.handler);
  const std::uint32_t version = std::min(login.tds_version, kTds74);
  use_nbcrow_ = version >= kTds73B;
  const std::size_t packet_size =
      login.packet_size == 0
          ? kDefaultPacketSize
          : std::clamp<std::size_t>(login.packet_size, kMinPacketSize,
                                    channel_.encrypted() ? kMaxEncryptedPacketSize
                                                         : kMaxPacketSize);
  const std::string database = factory_.DatabaseName();

  WireBuffer& out = stream_.Next();
  WriteEnvChangeText(out, EnvChange::kDatabase, database, "master");
  MessageToken info;
  info.number = kDatabaseChanged;
  info.state = 2;
  info.text = "Changed database context to '" + database + "'.";
  info.server_name = server_name_;
  WriteInfo(out, info);
  WriteEnvChangeBytes(out, EnvChange::kCollation, kServerCollation, "");
  WriteEnvChangeText(out, EnvChange::kLanguage, "us_english", "");
  WriteEnvChangeText(out, EnvChange::kPacketSize, std::to_string(packet_size),
                     std::to_string(kDefaultPacketSize));
  info.number = kLanguageChanged;
  info.state = 1;
  info.text = "Changed language setting to us_english.";
  WriteInfo(out, info);
  WriteLoginAck(out, version, "Microsoft SQL Server", 16, 0, 1000);
  if (fed_auth) WriteFeatureExtAck(out, FederatedAuthentication::kFeatureId);
  stream_.Done(DoneToken{token::kDone, done::kFinal, 0, 0});
  stream_.EndMessage();
  writer_.set_packet_size(packet_size);
  rpc_ = std::make_unique<RpcRunner>(stream_, use_nbcrow_, server_name_, options_.log_requests);
  channel_.SetLimits(kMaxRequestBytes, std::nullopt);  // logged in: requests of any size
  spdlog::debug("tds: '{}' logged in from {} (app '{}', packet size {})", shown_user,
                options_.peer, login.app_name, packet_size);
  return true;
}

void Session::HandleSqlBatch(const Message& message) {
  std::string sql;
  try {
    sql = ParseSqlBatch(message.payload);
  } catch (const SourceError& e) {
    return RejectRequest(e.what());
  }
  if (options_.log_requests) spdlog::info("tds: batch: {}", sql);
  StatementReply reply(stream_, StatementReply::Framing::kBatch, use_nbcrow_, server_name_);
  try {
    handler_->Execute(Statement{std::move(sql), {}, false}, reply);
    reply.Finish();
  } catch (const std::exception& e) {
    spdlog::warn("tds: statement failed: {}", e.what());
    reply.FailWithException(e.what());
  }
  stream_.EndMessage();
}

void Session::HandleRpc(const Message& message) {
  std::vector<RpcCall> calls;
  try {
    calls = ParseRpcRequest(message.payload);
  } catch (const SourceError& e) {
    return RejectRequest(e.what());
  }
  for (const RpcCall& call : calls) rpc_->Run(call, *handler_);
  stream_.EndMessage();
}

void Session::HandleTransaction(const Message& message) {
  TransactionRequest request;
  try {
    request = ParseTransactionRequest(message.payload);
  } catch (const SourceError& e) {
    return RejectRequest(e.what());
  }
  if (options_.log_requests) {
    spdlog::info("tds: transaction manager request {}", request.request_type);
  }
  auto begin = [&] {
    transaction_ = next_transaction_++;
    WriteEnvChangeBytes(stream_.Next(), EnvChange::kBeginTransaction, Descriptor(transaction_),
                        "");
  };
  auto end = [&](EnvChange type) {
    if (transaction_ != 0) {
      WriteEnvChangeBytes(stream_.Next(), type, "", Descriptor(transaction_));
      transaction_ = 0;
    }
    if (request.begin_after) begin();
  };
  switch (request.kind) {
    case TransactionRequest::Kind::kBegin:
      begin();
      break;
    case TransactionRequest::Kind::kCommit:
      end(EnvChange::kCommitTransaction);
      break;
    case TransactionRequest::Kind::kRollback:
      end(EnvChange::kRollbackTransaction);
      break;
    case TransactionRequest::Kind::kOther: {
      StatementReply reply(stream_, StatementReply::Framing::kBatch, use_nbcrow_, server_name_);
      reply.Fail(ServerError{kUnsupportedRequest, 1, 16,
                             "Transaction manager request " +
                                 std::to_string(request.request_type) +
                                 " is not supported by this server."});
      stream_.EndMessage();
      return;
    }
  }
  stream_.Done(DoneToken{token::kDone, done::kFinal, 0, 0});
  stream_.EndMessage();
}

void Session::AnswerAttention() {
  stream_.Done(DoneToken{token::kDone, done::kAttention, 0, 0});
  stream_.EndMessage();
}

void Session::RejectRequest(const std::string& why) {
  spdlog::warn("tds: {}: {}", options_.peer, why);
  StatementReply reply(stream_, StatementReply::Framing::kBatch, use_nbcrow_, server_name_);
  reply.Fail(ServerError{kProtocolError, 1, 16, why});
  stream_.EndMessage();
}

}  // namespace mssql_cdc::tds
