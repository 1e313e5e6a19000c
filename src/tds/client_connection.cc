#include "tds/client_connection.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tds/packet.h"
#include "tds/prelogin.h"
#include "tds/text_encoding.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kLogin7Fixed = 94;
constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::uint16_t kProcExecuteSql = 10;
constexpr std::uint16_t kMaxLength = 0xFFFF;
// SQL_Latin1_General_CP1_CI_AS: the collation a client states for its nvarchar parameters.
constexpr std::uint8_t kParamCollation[5] = {0x09, 0x04, 0xD0, 0x00, 0x34};

[[noreturn]] void Network(const std::string& what) {
  throw ClientFailure(ClientFailure::Kind::kNetwork, what);
}

// Waits for `events` until `deadline`; Clock::time_point::max() waits as long as it takes (a
// statement may run long before its first row; TCP keepalives find a server that went away).
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) {
    for (;;) {
      pollfd p{fd, events, 0};
      const int ready = poll(&p, 1, -1);
      if (ready < 0 && errno == EINTR) continue;
      return ready == 1;
    }
  }
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    return ready == 1;
  }
}

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

void ReplyStream::Start(int fd, std::chrono::milliseconds read_timeout) {
  fd_ = fd;
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

bool ReplyStream::Fill(std::size_t n) {
  if (pos_ > 0 && pos_ == end_) pos_ = end_ = 0;
  if (pos_ > 0 && buffer_.size() - pos_ < n) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (buffer_.size() < pos_ + n) buffer_.resize(std::max(pos_ + n, std::max<std::size_t>(buffer_.size() * 2, kReadChunk)));
  const auto deadline =
      read_timeout_.count() > 0 ? Clock::now() + read_timeout_ : Clock::time_point::max();
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
        if (raw_.size() < kReadChunk) raw_.resize(kReadChunk);
        if (!WaitFor(fd_, POLLIN, deadline)) {
          dead_ = true;
          Network("the server sent nothing for " + std::to_string(read_timeout_.count() / 1000) +
                  " s");
        }
        const ssize_t got = recv(fd_, raw_.data() + raw_end_, raw_.size() - raw_end_, 0);
        if (got <= 0) {
          if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
          dead_ = true;
          Network(got == 0 ? "the server closed the connection"
                           : std::string("reading from the server failed: ") + std::strerror(errno));
        }
        raw_end_ += static_cast<std::size_t>(got);
      }
      const PacketHeader header = ParsePacketHeader(raw_.data() + raw_pos_);
      raw_pos_ += kPacketHeaderSize;
      if (header.type != static_cast<std::uint8_t>(MessageType::kReply) ||
          header.length < kPacketHeaderSize) {
        dead_ = true;
        throw ClientFailure(ClientFailure::Kind::kProtocol, "the server's reply is not TDS");
      }
      packet_left_ = header.length - kPacketHeaderSize;
      last_packet_ = (header.status & kStatusEndOfMessage) != 0;
      continue;
    }
    if (raw_end_ == raw_pos_) {
      raw_pos_ = raw_end_ = 0;
      if (raw_.size() < kReadChunk) raw_.resize(kReadChunk);
      if (!WaitFor(fd_, POLLIN, deadline)) {
        dead_ = true;
        Network("the server sent nothing for " + std::to_string(read_timeout_.count() / 1000) + " s");
      }
      const ssize_t got = recv(fd_, raw_.data(), raw_.size(), 0);
      if (got <= 0) {
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        dead_ = true;
        Network(got == 0 ? "the server closed the connection"
                         : std::string("reading from the server failed: ") + std::strerror(errno));
      }
      raw_end_ = static_cast<std::size_t>(got);
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

ClientConnection::~ClientConnection() {
  if (fd_ >= 0) close(fd_);
}

std::unique_ptr<ClientConnection> ClientConnection::Open(const ClientLogin& login) {
  std::unique_ptr<ClientConnection> c(new ClientConnection());
  c->timeout_ = login.timeout;
  const auto deadline = Clock::now() + login.timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(login.host.c_str(), std::to_string(login.port).c_str(), &hints, &found) != 0) {
    Network("cannot resolve the server's host name");
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr && c->fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last_error = std::strerror(errno);
      close(fd);
      continue;
    }
    int error = 0;
    socklen_t length = sizeof(error);
    if (!WaitFor(fd, POLLOUT, deadline) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      last_error = error != 0 ? std::strerror(error) : "timed out";
      close(fd);
      continue;
    }
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    // A server that vanishes without closing is found within about a minute.
    const int idle = 30, interval = 10, count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    c->fd_ = fd;
  }
  freeaddrinfo(found);
  if (c->fd_ < 0) Network("cannot connect to the server: " + last_error);

  // PRELOGIN: this client never encrypts. It offers ENCRYPT_OFF when the login must be kept
  // as safe as Driver 18 keeps it (a server able to encrypt the login then answers OFF or ON,
  // and the read is the driver's), ENCRYPT_NOT_SUP where the driver would not encrypt either.
  const std::string prelogin = BuildPreloginRequest(
      login.encrypt_login_where_offered ? Encryption::kOff : Encryption::kNotSupported);
  c->Send(static_cast<std::uint8_t>(MessageType::kPrelogin),
          std::vector<std::uint8_t>(prelogin.begin(), prelogin.end()));
  c->reply_.Start(c->fd_, login.timeout);
  std::string answer;
  while (c->reply_.Have(1)) {
    answer.push_back(static_cast<char>(c->reply_.U8()));
  }
  const Encryption encryption = ParsePrelogin(answer).encryption;
  if (encryption == Encryption::kRequired || encryption == Encryption::kOn) {
    throw ClientFailure(ClientFailure::Kind::kEncryptionRequired,
                        "the server requires encryption");
  }
  if (encryption == Encryption::kOff && login.encrypt_login_where_offered) {
    throw ClientFailure(ClientFailure::Kind::kEncryptionRequired,
                        "the server encrypts the login, which the engine's reader does not do");
  }
  c->Login(login);
  return c;
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
  const auto deadline = Clock::now() + timeout_;
  std::size_t sent = 0;
  while (sent < wire.size()) {
    if (!WaitFor(fd_, POLLOUT, deadline)) {
      reply_.dead_ = true;
      Network("the server took no request for " + std::to_string(timeout_.count() / 1000) + " s");
    }
    const ssize_t n = send(fd_, wire.data() + sent, wire.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      reply_.dead_ = true;
      Network(std::string("sending to the server failed: ") + std::strerror(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
}

void ClientConnection::Login(const ClientLogin& login) {
  std::vector<std::uint8_t> fields[8];  // host, user, password, app, server, library, language, database
  PutUtf16(fields[0], "mssql-cdc");
  PutUtf16(fields[1], login.user);
  PutUtf16(fields[2], login.password);
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
  put16(56, static_cast<std::uint16_t>(offset));  // extension: none
  put16(78, static_cast<std::uint16_t>(offset));  // SSPI: none
  put16(82, static_cast<std::uint16_t>(offset));  // attach file: none
  put16(86, static_cast<std::uint16_t>(offset));  // change password: none
  put32(0, static_cast<std::uint32_t>(out.size()));
  Send(static_cast<std::uint8_t>(MessageType::kLogin7), out);
  std::fill(out.begin(), out.end(), 0);  // the scrambled password
  std::fill(fields[2].begin(), fields[2].end(), 0);

  reply_.Start(fd_, timeout_);
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
  reply_.Start(fd_, std::chrono::milliseconds(0));  // a statement's reply: no time limit
}

}  // namespace mssql_cdc::tds
