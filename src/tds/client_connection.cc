#include "tds/client_connection.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tds/packet.h"
#include "tds/prelogin.h"
#include "tds/text_encoding.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::size_t kLogin7Fixed = 94;
constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::uint16_t kProcExecuteSql = 10;
constexpr std::uint16_t kMaxLength = 0xFFFF;
// SQL_Latin1_General_CP1_CI_AS: the collation a client states for its nvarchar parameters.
constexpr std::uint8_t kParamCollation[5] = {0x09, 0x04, 0xD0, 0x00, 0x34};

void PutUtf16(std::vector<std::uint8_t>& out, std::string_view utf8) {
  WireBuffer buffer;
  buffer.PutUtf16(utf8);
  out.insert(out.end(), buffer.data(), buffer.data() + buffer.size());
}

void PutU16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void PutU32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void PutU64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// An NVARCHAR(max) RPC parameter with no name: TYPE_INFO and a PLP value of one chunk.
void PutNVarCharMax(std::vector<std::uint8_t>& out, std::string_view utf8) {
  out.push_back(0);  // name: none (positional)
  out.push_back(0);  // status flags
  out.push_back(0xE7);
  PutU16(out, kMaxLength);
  out.insert(out.end(), kParamCollation, kParamCollation + 5);
  std::vector<std::uint8_t> text;
  PutUtf16(text, utf8);
  PutU64(out, text.size());
  if (!text.empty()) {
    PutU32(out, static_cast<std::uint32_t>(text.size()));
    out.insert(out.end(), text.begin(), text.end());
  }
  PutU32(out, 0);  // the terminating chunk
}

ServerMessage ReadMessage(ReplyStream& reply) {
  const std::uint16_t length = reply.U16();
  if (!reply.Have(length)) reply.Need(length);
  ServerMessage m;
  m.number = static_cast<std::int32_t>(reply.U32());
  m.state = reply.U8();
  m.severity = reply.U8();
  m.message = reply.UsVarChar();
  reply.BVarChar();  // server
  reply.BVarChar();  // procedure
  reply.U32();       // line
  return m;
}

std::string Describe(const std::vector<ServerMessage>& errors) {
  std::string text;
  for (const auto& e : errors) {
    if (!text.empty()) text += "; ";
    text += "Msg " + std::to_string(e.number) + ", Level " + std::to_string(e.severity) + ": " +
            e.message;
  }
  return text;
}

}  // namespace

// ---- ReplyStream

void ReplyStream::Start(ClientTransport* transport, std::chrono::milliseconds read_timeout) {
  transport_ = transport;
  read_timeout_ = read_timeout;
  if (pos_ != end_) {
    throw ClientFailure(ClientFailure::Kind::kProtocol,
                        "a TDS reply was not read to its end before the next request");
  }
  pos_ = end_ = 0;
  packet_left_ = 0;
  last_packet_ = false;
  started_ = true;
}

void ReplyStream::ReceiveRaw() {
  if (raw_.size() < kReadChunk) raw_.resize(kReadChunk);
  raw_end_ += transport_->Receive(raw_.data() + raw_end_, raw_.size() - raw_end_, read_timeout_);
}

bool ReplyStream::Fill(std::size_t n) {
  if (pos_ > 0 && pos_ == end_) pos_ = end_ = 0;
  if (pos_ > 0 && buffer_.size() - pos_ < n) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (buffer_.size() < pos_ + n) buffer_.resize(std::max(pos_ + n, std::max<std::size_t>(buffer_.size() * 2, kReadChunk)));
  while (end_ - pos_ < n) {
    if (packet_left_ == 0) {
      if (last_packet_ || !started_) return false;
      // The next packet's header.
      while (raw_end_ - raw_pos_ < kPacketHeaderSize) {
        if (raw_pos_ > 0) {
          std::memmove(raw_.data(), raw_.data() + raw_pos_, raw_end_ - raw_pos_);
          raw_end_ -= raw_pos_;
          raw_pos_ = 0;
        }
        ReceiveRaw();
      }
      const PacketHeader header = ParsePacketHeader(raw_.data() + raw_pos_);
      raw_pos_ += kPacketHeaderSize;
      if (header.type != static_cast<std::uint8_t>(MessageType::kReply) ||
          header.length < kPacketHeaderSize) {
        transport_->MarkDead();
        throw ClientFailure(ClientFailure::Kind::kProtocol, "the server's reply is not TDS");
      }
      packet_left_ = header.length - kPacketHeaderSize;
      last_packet_ = (header.status & kStatusEndOfMessage) != 0;
      continue;
    }
    if (raw_end_ == raw_pos_) {
      raw_pos_ = raw_end_ = 0;
      ReceiveRaw();
    }
    const std::size_t take = std::min({packet_left_, raw_end_ - raw_pos_, buffer_.size() - end_});
    std::memcpy(buffer_.data() + end_, raw_.data() + raw_pos_, take);
    end_ += take;
    raw_pos_ += take;
    packet_left_ -= take;
  }
  return true;
}

void ReplyStream::Skip(std::size_t n) {
  while (n > 0) {
    const std::size_t step = std::min<std::size_t>(n, kReadChunk);
    Need(step);
    pos_ += step;
    n -= step;
  }
}

void ReplyStream::Truncated() const {
  throw ClientFailure(ClientFailure::Kind::kProtocol, "the server's reply ended inside a token");
}

std::string ReplyStream::Utf16Chars(std::size_t chars) {
  const std::uint8_t* p = Need(2 * chars);
  std::string text = Utf16ToUtf8(std::string_view(reinterpret_cast<const char*>(p), 2 * chars));
  pos_ += 2 * chars;
  return text;
}

std::string ReplyStream::BVarChar() { return Utf16Chars(U8()); }

std::string ReplyStream::UsVarChar() { return Utf16Chars(U16()); }

bool ReplyStream::AtEnd() {
  return pos_ == end_ && !Have(1);
}

// ---- tokens

void SkipToken(ReplyStream& reply, std::uint8_t token, std::vector<ServerMessage>* errors) {
  switch (token) {
    case 0xAA:  // ERROR
      errors->push_back(ReadMessage(reply));
      return;
    case 0xAB:  // INFO
      ReadMessage(reply);
      return;
    case 0xFD: case 0xFE: case 0xFF:  // DONE, DONEPROC, DONEINPROC
      reply.Skip(12);
      return;
    case 0x79:  // RETURNSTATUS
      reply.Skip(4);
      return;
    case 0xAD:  // LOGINACK
    case 0xE3:  // ENVCHANGE
    case 0xA9:  // ORDER
    case 0xA4:  // TABNAME
    case 0xA5:  // COLINFO
    case 0xED:  // SSPI
      reply.Skip(reply.U16());
      return;
    case 0xAE:  // FEATUREEXTACK
      for (;;) {
        if (reply.U8() == 0xFF) return;
        reply.Skip(reply.U32());
      }
    default:
      throw ClientFailure(ClientFailure::Kind::kProtocol,
                          "the server sent TDS token 0x" + [&] {
                            char hex[3];
                            std::snprintf(hex, sizeof hex, "%02X", token);
                            return std::string(hex);
                          }() + " where this reader does not expect one");
  }
}

void DrainReply(ReplyStream& reply) {
  std::vector<ServerMessage> errors;
  while (!reply.AtEnd()) SkipToken(reply, reply.U8(), &errors);
  if (!errors.empty()) throw ClientFailure(ClientFailure::Kind::kServer, Describe(errors), errors);
}

// ---- ClientConnection

ClientConnection::~ClientConnection() = default;

std::unique_ptr<ClientConnection> ClientConnection::Open(const ClientLogin& login) {
  std::unique_ptr<ClientConnection> c(new ClientConnection());
  c->timeout_ = login.timeout;
  c->transport_ = ClientTransport::Connect(login.host, login.port,
                                           std::chrono::steady_clock::now() + login.timeout);
  const Negotiated negotiated = c->Negotiate(login);
  c->Login(login, negotiated);
  return c;
}

ClientConnection::Negotiated ClientConnection::Negotiate(const ClientLogin& login) {
  using Encrypt = ClientLogin::Encrypt;
  if (login.encrypt != Encrypt::kNever && login.tls == nullptr) {
    throw InternalError("an encrypted TDS login without its TLS context");
  }
  if (login.encrypt == Encrypt::kStrict) {
    // TDS 8.0: TLS first; PRELOGIN and the rest travel inside it.
    transport_->StartTls(*login.tls, login.host, /*inside_prelogin=*/false, timeout_);
  }
  // What Driver 18 offers for each setting (decision 0020); ENCRYPT_NOT_SUP where the driver
  // stood in for never encrypts.
  const Encryption offer = login.encrypt == Encrypt::kNever ? Encryption::kNotSupported
                           : login.encrypt == Encrypt::kNo  ? Encryption::kOff
                                                            : Encryption::kOn;
  const std::string prelogin = BuildPreloginRequest(offer, login.access_token.has_value());
  Send(static_cast<std::uint8_t>(MessageType::kPrelogin),
       std::vector<std::uint8_t>(prelogin.begin(), prelogin.end()));
  reply_.Start(transport_.get(), timeout_);
  std::string answer;
  while (reply_.Have(1)) answer.push_back(static_cast<char>(reply_.U8()));
  const PreloginRequest reply = ParsePrelogin(answer);
  Negotiated negotiated;
  negotiated.fed_auth_echo = reply.fed_auth_required;
  if (login.encrypt != Encrypt::kStrict) {
    negotiated.login_only_tls = StartTlsAsAgreed(login, reply.encryption);
  }
  if (login.access_token && !transport_->encrypted()) {
    throw ClientFailure(ClientFailure::Kind::kEncryptionRequired,
                        "the server does not encrypt the login, and an access token is sent "
                        "only encrypted");
  }
  return negotiated;
}

bool ClientConnection::StartTlsAsAgreed(const ClientLogin& login, Encryption server) {
  using Encrypt = ClientLogin::Encrypt;
  switch (login.encrypt) {
    case Encrypt::kNever:
      if (server == Encryption::kRequired || server == Encryption::kOn) {
        throw ClientFailure(ClientFailure::Kind::kEncryptionRequired,
                            "the server requires encryption");
      }
      return false;
    case Encrypt::kYes:
      if (server == Encryption::kNotSupported) {
        throw ClientFailure(ClientFailure::Kind::kEncryptionUnavailable,
                            "Encryption not supported on SQL Server.");
      }
      transport_->StartTls(*login.tls, login.host, /*inside_prelogin=*/true, timeout_);
      return false;
    case Encrypt::kNo:
      if (server == Encryption::kNotSupported) return false;
      if (server == Encryption::kOff) {
        if (login.login_only_tls == nullptr) {
          throw InternalError("a login-only TLS without its context");
        }
        transport_->StartTls(*login.login_only_tls, login.host, /*inside_prelogin=*/true, timeout_);
        return true;
      }
      // The server insists: everything is encrypted, and the certificate checked.
      transport_->StartTls(*login.tls, login.host, /*inside_prelogin=*/true, timeout_);
      return false;
    case Encrypt::kStrict:
      break;
  }
  return false;
}

void ClientConnection::Send(std::uint8_t type, const std::vector<std::uint8_t>& payload) {
  const std::size_t room = packet_size_ - kPacketHeaderSize;
  std::vector<std::uint8_t> wire;
  wire.reserve(payload.size() + (payload.size() / room + 1) * kPacketHeaderSize);
  std::uint8_t packet_id = 1;
  std::size_t offset = 0;
  do {
    const std::size_t take = std::min(room, payload.size() - offset);
    PacketHeader header;
    header.type = type;
    header.status = offset + take == payload.size() ? kStatusEndOfMessage : 0;
    header.length = static_cast<std::uint16_t>(kPacketHeaderSize + take);
    header.packet_id = packet_id++;
    const std::size_t at = wire.size();
    wire.resize(at + kPacketHeaderSize);
    WritePacketHeader(wire.data() + at, header);
    wire.insert(wire.end(), payload.begin() + offset, payload.begin() + offset + take);
    offset += take;
  } while (offset < payload.size());
  transport_->Send(wire.data(), wire.size(), timeout_);
  std::fill(wire.begin(), wire.end(), 0);  // a LOGIN7's scrambled password
}

void ClientConnection::Login(const ClientLogin& login, const Negotiated& negotiated) {
  const bool token = login.access_token.has_value();
  std::vector<std::uint8_t> fields[8];  // host, user, password, app, server, library, language, database
  PutUtf16(fields[0], "mssql-cdc");
  if (!token) {
    PutUtf16(fields[1], login.user);
    PutUtf16(fields[2], login.password);
  }
  for (auto& byte : fields[2]) {
    // Each byte's nibbles swapped, then XOR 0xA5 (MS-TDS 2.2.6.4).
    byte = static_cast<std::uint8_t>(((byte << 4) | (byte >> 4)) ^ 0xA5);
  }
  PutUtf16(fields[3], login.app_name);
  PutUtf16(fields[4], login.host);
  PutUtf16(fields[5], "mssql-cdc");
  // fields[6]: language, none
  PutUtf16(fields[7], login.database);

  std::vector<std::uint8_t> out(kLogin7Fixed, 0);
  auto put32 = [&](std::size_t at, std::uint32_t v) { WireBuffer::Store32(out.data() + at, v); };
  auto put16 = [&](std::size_t at, std::uint16_t v) { WireBuffer::Store16(out.data() + at, v); };
  put32(4, kTds74);
  put32(8, login.packet_size);
  put32(12, 0x07000000);  // client program version
  put32(16, static_cast<std::uint32_t>(getpid()));
  out[24] = 0xE0;  // OptionFlags1: USE_DB_ON, INIT_DB_FATAL, SET_LANG_ON
  out[25] = 0x03;  // OptionFlags2: INIT_LANG_FATAL, ODBC_ON
  if (token) out[27] = 0x10;  // OptionFlags3: fExtension
  put32(32, 0x0409);  // client LCID
  // (offset, characters) of each field, in the order of the fixed part.
  const std::size_t field_at[] = {36, 40, 44, 48, 52, 60, 64, 68};
  const int field_of[] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::size_t offset = kLogin7Fixed;
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& bytes = fields[field_of[i]];
    put16(field_at[i], static_cast<std::uint16_t>(offset));
    put16(field_at[i] + 2, static_cast<std::uint16_t>(bytes.size() / 2));
    out.insert(out.end(), bytes.begin(), bytes.end());
    offset += bytes.size();
  }
  // With a token, ibExtension points to a DWORD holding where the FeatureExt list starts.
  const std::size_t pointer_at = offset;
  if (token) {
    out.resize(out.size() + 4);
    offset += 4;
    put16(56, static_cast<std::uint16_t>(pointer_at));
    put16(58, 4);
  } else {
    put16(56, static_cast<std::uint16_t>(offset));  // extension: none
  }
  put16(78, static_cast<std::uint16_t>(offset));  // SSPI: none
  put16(82, static_cast<std::uint16_t>(offset));  // attach file: none
  put16(86, static_cast<std::uint16_t>(offset));  // change password: none
  if (token) {
    put32(pointer_at, static_cast<std::uint32_t>(out.size()));
    // FEDAUTH (MS-TDS 2.2.6.4): the security-token library, echoing whether the server's
    // PRELOGIN asked for it, and the token as UTF-16LE.
    std::vector<std::uint8_t> token_bytes;
    PutUtf16(token_bytes, *login.access_token);
    out.push_back(0x02);  // FeatureId FEDAUTH
    PutU32(out, static_cast<std::uint32_t>(1 + 4 + token_bytes.size()));
    out.push_back(static_cast<std::uint8_t>((0x01 << 1) | (negotiated.fed_auth_echo ? 1 : 0)));
    PutU32(out, static_cast<std::uint32_t>(token_bytes.size()));
    out.insert(out.end(), token_bytes.begin(), token_bytes.end());
    out.push_back(0xFF);  // the list's end
    std::fill(token_bytes.begin(), token_bytes.end(), 0);
  }
  put32(0, static_cast<std::uint32_t>(out.size()));
  Send(static_cast<std::uint8_t>(MessageType::kLogin7), out);
  std::fill(out.begin(), out.end(), 0);  // the scrambled password, or the token
  std::fill(fields[2].begin(), fields[2].end(), 0);
  // A login-only encryption: the server answers it in plaintext.
  if (negotiated.login_only_tls) transport_->StopTls();

  reply_.Start(transport_.get(), timeout_);
  std::vector<ServerMessage> errors;
  bool acknowledged = false;
  while (!reply_.AtEnd()) {
    const std::uint8_t token = reply_.U8();
    if (token == 0xAD) acknowledged = true;
    if (token == 0xE3) {  // ENVCHANGE: the packet size the server agreed to
      const std::uint16_t length = reply_.U16();
      reply_.Need(length);
      const std::uint8_t kind = reply_.U8();
      if (kind == 4) {
        const std::string value = reply_.BVarChar();
        reply_.BVarChar();
        packet_size_ = static_cast<std::uint32_t>(std::stoul(value));
      } else {
        reply_.Skip(length - 1);
      }
      continue;
    }
    SkipToken(reply_, token, &errors);
  }
  if (!acknowledged || !errors.empty()) {
    throw ClientFailure(ClientFailure::Kind::kServer,
                        errors.empty() ? "the server did not acknowledge the login" : Describe(errors),
                        errors);
  }
}

void ClientConnection::ExecuteSql(std::string_view sql, const std::vector<BinaryParam>& params) {
  std::vector<std::uint8_t> out;
  // ALL_HEADERS: the transaction descriptor header of autocommit.
  PutU32(out, 22);
  PutU32(out, 18);
  PutU16(out, 2);
  PutU64(out, 0);
  PutU32(out, 1);
  PutU16(out, 0xFFFF);
  PutU16(out, kProcExecuteSql);
  PutU16(out, 0);  // option flags
  PutNVarCharMax(out, sql);
  std::string declaration;
  for (const auto& p : params) {
    if (!declaration.empty()) declaration += ",";
    declaration += p.name + " binary(" + std::to_string(p.declared_length) + ")";
  }
  PutNVarCharMax(out, declaration);
  for (const auto& p : params) {
    std::vector<std::uint8_t> name;
    PutUtf16(name, p.name);
    out.push_back(static_cast<std::uint8_t>(name.size() / 2));
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(0);  // status flags
    out.push_back(0xA5);  // BIGVARBINARY
    PutU16(out, static_cast<std::uint16_t>(p.declared_length));
    PutU16(out, static_cast<std::uint16_t>(p.bytes.size()));
    out.insert(out.end(), p.bytes.begin(), p.bytes.end());
  }
  Send(static_cast<std::uint8_t>(MessageType::kRpc), out);
  reply_.Start(transport_.get(), std::chrono::milliseconds(0));  // a statement's reply: no limit
}

}  // namespace mssql_cdc::tds
