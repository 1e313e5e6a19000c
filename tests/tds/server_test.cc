// TdsServer over raw sockets: the bytes of the handshake, packet framing both ways, and
// connections that misbehave, idle or get stopped.
#include "tds/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "core/errors.h"
#include "tds/prelogin.h"
#include "tests/tds/canned_handler.h"
#include "tests/tds/raw_client.h"

namespace mssql_cdc::tds {
namespace {

using namespace testing;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(int idle_timeout_seconds = 60) {
    ServerOptions options;
    options.idle_timeout_seconds = idle_timeout_seconds;
    Start(options);
  }
  void Start(const ServerOptions& options) {
    factory_ = std::make_shared<CannedFactory>();
    server_ = std::make_unique<TdsServer>(factory_, options);
  }
  void SetUp() override { Start(); }

  bool WaitFor(const std::function<bool()>& condition) {
    for (int i = 0; i < 400; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::shared_ptr<CannedFactory> factory_;
  std::unique_ptr<TdsServer> server_;
};

TEST_F(ServerTest, PreloginIsAnsweredWithATabularReplyAndNoEncryption) {
  RawClient client(server_->port());
  client.Send(MessageType::kPrelogin, BuildPrelogin(0x00));
  std::vector<PacketHeader> headers;
  auto reply = client.Read(&headers);
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(1u, headers.size());
  EXPECT_EQ(0x04, headers[0].type);
  EXPECT_EQ(kStatusEndOfMessage, headers[0].status);
  EXPECT_GE(headers[0].spid, 51);
  EXPECT_EQ(BuildPreloginReply(Encryption::kNotSupported), *reply);
}

TEST_F(ServerTest, ALoginGetsTheSqlServerTokenSequence) {
  RawClient client(server_->port());
  std::vector<PacketHeader> headers;
  client.Send(MessageType::kPrelogin, BuildPrelogin(0x02));
  ASSERT_TRUE(client.Read().has_value());
  client.Send(MessageType::kLogin7, BuildLogin("u", Ucs2("p"), "sim", 4096));
  auto reply = client.Read(&headers);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ("sim", factory_->last_database);
  // ENVCHANGE database "sim" (from master), first.
  EXPECT_EQ(Hex("E3 15 00 01 03 73 00 69 00 6D 00 06 6D 00 61 00 73 00 74 00 65 00 72 00"),
            reply->substr(0, 24));
  const std::size_t info = reply->find(Hex("AB"));
  const std::size_t collation = reply->find(Hex("E3 08 00 07 05 09 04 D0 00 34 00"));
  const std::size_t language = reply->find(Hex("E3 17 00 02 0A") + Ucs2("us_english"));
  const std::size_t packet_size = reply->find(Hex("E3 13 00 04 04") + Ucs2("4096"));
  const std::size_t loginack = reply->find(Hex("AD 32 00 01 74 00 00 04"));
  ASSERT_NE(std::string::npos, loginack);
  EXPECT_EQ(24u, info);
  EXPECT_TRUE(Contains(*reply, Hex("45 16 00 00 02 00"))) << "INFO 5701, state 2, class 0";
  EXPECT_LT(info, collation);
  EXPECT_LT(collation, language);
  EXPECT_LT(language, packet_size);
  EXPECT_LT(packet_size, loginack);
  EXPECT_EQ(Hex("FD 00 00 00 00 00 00 00 00 00 00 00 00"), reply->substr(reply->size() - 13));
  EXPECT_GE(headers[0].spid, 51);
}

TEST_F(ServerTest, AFailedLoginIs18456ThenClose) {
  RawClient client(server_->port());
  auto reply = client.Login("u", "hunter2-secret");
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(Contains(*reply, Hex("AA")));
  EXPECT_TRUE(Contains(*reply, Hex("18 48 00 00 01 0E"))) << "18456, state 1, class 14";
  EXPECT_TRUE(Contains(*reply, Ucs2("Login failed for user 'u'.")));
  EXPECT_FALSE(Contains(*reply, Ucs2("hunter2-secret")));
  EXPECT_EQ(Hex("FD 02 00 00 00 00 00 00 00 00 00 00 00"), reply->substr(reply->size() - 13));
  EXPECT_TRUE(client.ClosedByServer(5000));
}

// PRELOGIN with FEDAUTHREQUIRED=1, as Driver 18 sends it with an access token.
std::string PreloginAskingForFedAuth() {
  return Hex("00 00 10 00 06 01 00 16 00 01 06 00 17 00 01 FF 00 00 00 00 00 00 02 01");
}

TEST_F(ServerTest, AnAccessTokenLogsInAndTheFedAuthFeatureIsAcknowledged) {
  RawClient client(server_->port());
  client.Send(MessageType::kPrelogin, PreloginAskingForFedAuth());
  auto prelogin = client.Read();
  ASSERT_TRUE(prelogin.has_value());
  EXPECT_TRUE(ParsePrelogin(*prelogin).fed_auth_required);
  client.Send(MessageType::kLogin7,
              BuildLogin("", "", "", 4096, 0x74000004, FedAuthFeature("good-token", true)));
  auto reply = client.Read();
  ASSERT_TRUE(reply.has_value());
  // FEATUREEXTACK: FEDAUTH with no data, then the terminator, right after LOGINACK.
  EXPECT_TRUE(Contains(*reply, Hex("AE 02 00 00 00 00 FF FD")));
  client.SendBatch("SELECT rows 1");
  EXPECT_TRUE(client.Read().has_value());
}

TEST_F(ServerTest, AnExpiredUnknownOrUnechoedTokenIsRefusedWithoutShowingIt) {
  struct Case {
    std::string token;
    bool echo;
    std::string says;
  };
  for (const Case& c : {Case{"expired-token", true, "Login failed for user '<token-identified "
                                                    "principal>'. Token is expired."},
                        Case{"unknown-token", true, "Login failed for user '<token-identified "
                                                    "principal>'."},
                        Case{"good-token", false, "Login failed for user"}}) {
    RawClient client(server_->port());
    client.Send(MessageType::kPrelogin, PreloginAskingForFedAuth());
    ASSERT_TRUE(client.Read().has_value());
    client.Send(MessageType::kLogin7,
                BuildLogin("", "", "", 4096, 0x74000004, FedAuthFeature(c.token, c.echo)));
    auto reply = client.Read();
    ASSERT_TRUE(reply.has_value()) << c.token;
    EXPECT_TRUE(Contains(*reply, Hex("18 48 00 00 01 0E"))) << c.token;
    EXPECT_TRUE(Contains(*reply, Ucs2(c.says))) << c.token;
    EXPECT_FALSE(Contains(*reply, Ucs2(c.token))) << c.token;
    EXPECT_FALSE(Contains(*reply, Hex("AE 02 00 00 00 00 FF"))) << c.token;
    EXPECT_TRUE(client.ClosedByServer(5000)) << c.token;
  }
}

TEST_F(ServerTest, LoginWithoutPreloginAndTheNegotiatedPacketSize) {
  RawClient client(server_->port());
  client.Send(MessageType::kLogin7, BuildLogin("u", Ucs2("p"), "", 512));
  auto login = client.Read();
  ASSERT_TRUE(login.has_value());
  EXPECT_TRUE(Contains(*login, Hex("E3 11 00 04 03") + Ucs2("512")));
  client.SendBatch("SELECT rows 100", 512);
  std::vector<PacketHeader> headers;
  auto reply = client.Read(&headers);
  ASSERT_TRUE(reply.has_value());
  ASSERT_GT(headers.size(), 5u);
  for (std::size_t i = 0; i < headers.size(); ++i) {
    EXPECT_EQ(0x04, headers[i].type);
    EXPECT_LE(headers[i].length, 512);
    EXPECT_EQ(headers[0].spid, headers[i].spid);
    EXPECT_EQ(static_cast<std::uint8_t>(i + 1), headers[i].packet_id);
    const bool last = i + 1 == headers.size();
    EXPECT_EQ(last ? kStatusEndOfMessage : 0, headers[i].status) << "packet " << i;
    if (!last) {
      EXPECT_EQ(512, headers[i].length);
    }
  }
  // DONE with COUNT and 100 rows ends the reply.
  EXPECT_EQ(Hex("FD 10 00 C1 00 64 00 00 00 00 00 00 00"), reply->substr(reply->size() - 13));
}

TEST_F(ServerTest, ARequestSpanningManyPacketsIsReassembled) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.Login("u", "p").has_value());
  const std::string sql = "SET " + std::string(20000, 'x');
  client.SendBatch(sql, 512);
  auto reply = client.Read();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(Hex("FD 00 00 00 00 00 00 00 00 00 00 00 00"), *reply);
  auto statements = factory_->state.Statements();
  ASSERT_EQ(1u, statements.size());
  EXPECT_EQ(sql, statements[0].sql);
  EXPECT_FALSE(statements[0].is_rpc);
}

TEST_F(ServerTest, AnAttentionBetweenRequestsIsAcknowledged) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.Login("u", "p").has_value());
  client.Send(MessageType::kAttention, "");
  auto reply = client.Read();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(Hex("FD 20 00 00 00 00 00 00 00 00 00 00 00"), *reply);
}

TEST_F(ServerTest, AnAttentionDuringAResultEndsItWithDoneAttn) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.Login("u", "p").has_value());
  client.SendBatch("SELECT rows 10000000");
  ASSERT_TRUE(client.ReceiveSome());
  client.Send(MessageType::kAttention, "");
  // Drain to the end of the reply: its last token is DONE with the ATTN bit.
  std::string tail;
  for (int i = 0; i < 100000; ++i) {
    std::vector<PacketHeader> headers;
    auto rest = client.Read(&headers);
    ASSERT_TRUE(rest.has_value());
    tail = *rest;
    if (tail.size() >= 13 && tail.substr(tail.size() - 13, 3) == Hex("FD 20 00")) break;
  }
  EXPECT_EQ(Hex("FD 20 00"), tail.substr(tail.size() - 13, 3));
  EXPECT_EQ(1, factory_->state.attentions.load());
  client.SendBatch("SELECT rows 1");
  auto next = client.Read();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(Hex("FD 10 00 C1 00 01 00 00 00 00 00 00 00"), next->substr(next->size() - 13));
}

TEST_F(ServerTest, AMalformedRpcGetsAnErrorAndTheConnectionGoesOn) {
  RawClient client(server_->port());
  ASSERT_TRUE(client.Login("u", "p").has_value());
  // sp_executesql with a sql_variant parameter, which the server does not read.
  client.Send(MessageType::kRpc,
              Hex("16 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 01 00 00 00 00 "
                  "FF FF 0A 00 00 00 00 00 62 10 00 00 00"));
  auto reply = client.Read();
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(Contains(*reply, Hex("A2 0F 00 00"))) << "error 4002";
  EXPECT_EQ(Hex("FD 02 00"), reply->substr(reply->size() - 13, 3));
  client.SendBatch("SELECT rows 1");
  EXPECT_TRUE(client.Read().has_value());
}

TEST_F(ServerTest, GarbageClosesOnlyThatConnection) {
  RawClient good(server_->port());
  ASSERT_TRUE(good.Login("u", "p").has_value());
  RawClient bad(server_->port());
  bad.SendRaw(Hex("12 01 00 03 00 00 00 00"));  // a packet shorter than its header
  EXPECT_TRUE(bad.ClosedByServer(5000));
  RawClient early(server_->port());
  early.SendBatch("SELECT rows 1");  // a request before any login
  EXPECT_TRUE(early.ClosedByServer(5000));
  RawClient old(server_->port());
  old.Send(MessageType::kLogin7, BuildLogin("u", Ucs2("p"), "", 4096, 0x71000001));
  EXPECT_TRUE(old.ClosedByServer(5000)) << "TDS 7.1 is refused";
  good.SendBatch("SELECT rows 2");
  auto reply = good.Read();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(Hex("FD 10 00 C1 00 02 00"), reply->substr(reply->size() - 13, 7));
}

TEST_F(ServerTest, AClientRequiringEncryptionIsClosedAfterThePreloginReply) {
  RawClient client(server_->port());
  client.Send(MessageType::kPrelogin, BuildPrelogin(0x01));
  auto reply = client.Read();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(BuildPreloginReply(Encryption::kNotSupported), *reply);
  EXPECT_TRUE(client.ClosedByServer(5000));
}

TEST_F(ServerTest, IdleConnectionsAreClosed) {
  server_.reset();
  Start(/*idle_timeout_seconds=*/1);
  RawClient client(server_->port());
  ASSERT_TRUE(client.Login("u", "p").has_value());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ClosedByServer(5000));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

TEST_F(ServerTest, StopClosesEveryConnectionAndJoins) {
  RawClient a(server_->port());
  RawClient b(server_->port());
  ASSERT_TRUE(a.Login("u", "p").has_value());
  ASSERT_TRUE(b.Login("u", "p").has_value());
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 2; }));
  const int port = server_->port();
  server_->Stop();
  EXPECT_EQ(0, server_->connection_count());
  EXPECT_TRUE(a.ClosedByServer(2000));
  EXPECT_TRUE(b.ClosedByServer(2000));
  server_->Stop();  // idempotent
  EXPECT_THROW(RawClient late(port), std::runtime_error);
}

TEST_F(ServerTest, APortInUseIsAConfigErrorNamingIt) {
  ServerOptions options;
  options.port = server_->port();
  try {
    TdsServer second(factory_, options);
    FAIL() << "bound a port already in use";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(Contains(e.what(), "127.0.0.1:" + std::to_string(server_->port()))) << e.what();
  }
}

// The resident memory of this process, from /proc/self/status.
long long ResidentKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// A PRELOGIN message that never ends: packets without the end-of-message bit, until the
// server closes the connection. Returns the bytes the server took.
std::size_t SendEndlessPrelogin(int port) {
  RawClient client(port);
  const std::string body(4096 - kPacketHeaderSize, 'x');
  std::size_t sent = 0;
  for (std::uint8_t id = 1; sent < (64u << 20); ++id) {
    std::string packet(kPacketHeaderSize, '\0');
    WritePacketHeader(reinterpret_cast<std::uint8_t*>(packet.data()),
                      PacketHeader{static_cast<std::uint8_t>(MessageType::kPrelogin), 0, 4096, 0, id});
    if (::send(client.fd(), (packet + body).data(), 4096, MSG_NOSIGNAL) != 4096) break;
    sent += 4096;
  }
  return sent;
}

TEST_F(ServerTest, AMessageBeforeLoginIsRefusedAtItsSmallLimit) {
  const std::size_t sent = SendEndlessPrelogin(server_->port());
  // The server closed the connection once the message passed its limit; what the client
  // got into the socket buffers on top of that is small too.
  EXPECT_LT(sent, 16u << 20);
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 0; }));
}

TEST_F(ServerTest, AClientThatDoesNotLogInInTimeIsClosed) {
  server_.reset();
  ServerOptions options;
  options.login_timeout_seconds = 1;
  Start(options);
  RawClient slow(server_->port());
  const auto start = std::chrono::steady_clock::now();
  // A slow-loris: one byte of a PRELOGIN header now and then, never a whole message.
  bool closed = false;
  for (int i = 0; i < 40 && !closed; ++i) {
    slow.SendRaw(std::string(1, '\x12'));
    closed = slow.ClosedByServer(100);
  }
  EXPECT_TRUE(closed);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::milliseconds(3500));
  // A client that logs in at once is not affected, and a logged-in one keeps the idle timeout.
  RawClient quick(server_->port());
  ASSERT_TRUE(quick.Login("u", "p").has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  quick.SendBatch("SELECT rows 1");
  EXPECT_TRUE(quick.Read().has_value());
}

TEST_F(ServerTest, ConnectionsBeyondTheMostAreClosedAsTheyArrive) {
  server_.reset();
  ServerOptions options;
  options.max_connections = 2;
  Start(options);
  RawClient a(server_->port());
  RawClient b(server_->port());
  ASSERT_TRUE(a.Login("u", "p").has_value());
  ASSERT_TRUE(b.Login("u", "p").has_value());
  RawClient c(server_->port());
  EXPECT_TRUE(c.ClosedByServer(2000));
  a.Close();
  EXPECT_TRUE(WaitFor([&] { return server_->connection_count() == 1; }));
  RawClient d(server_->port());
  EXPECT_TRUE(d.Login("u", "p").has_value());
}

TEST_F(ServerTest, ClientsThatLogInAreServedWhileOthersAbuseTheServer) {
  server_.reset();
  ServerOptions options;
  options.login_timeout_seconds = 2;
  Start(options);
  const long long rss_before = ResidentKiB();
  std::atomic<bool> stop{false};
  std::vector<std::thread> abusers;
  for (int i = 0; i < 4; ++i) {
    abusers.emplace_back([&] {
      while (!stop) SendEndlessPrelogin(server_->port());
    });
  }
  abusers.emplace_back([&] {  // slow-loris clients, one after another
    while (!stop) {
      RawClient slow(server_->port());
      while (!stop && !slow.ClosedByServer(200)) slow.SendRaw(std::string(1, '\x12'));
    }
  });
  int served = 0;
  for (int i = 0; i < 20; ++i) {
    RawClient client(server_->port());
    if (!client.Login("u", "p").has_value()) continue;
    client.SendBatch("SELECT rows 3");
    auto reply = client.Read();
    served += reply.has_value() && Contains(*reply, Hex("FD 10 00 C1 00 03 00")) ? 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const long long rss_during = ResidentKiB();
  stop = true;
  for (auto& t : abusers) t.join();
  EXPECT_EQ(served, 20);
  // Each refused message held at most its 128 KiB; unbounded, four clients took 800 MiB.
  EXPECT_LT(rss_during - rss_before, 64 * 1024) << rss_before << " KiB before";
}

}  // namespace
}  // namespace mssql_cdc::tds
