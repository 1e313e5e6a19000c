#include "tds/message_writer.h"

#include <gtest/gtest.h>

#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::CollectingSink;

std::string Filler(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7);
  return s;
}

TEST(MessageWriter, SplitsAtThePacketSizeAndMarksOnlyTheLastPacketEom) {
  CollectingSink sink;
  MessageWriter writer(sink, 51);
  writer.set_packet_size(512);
  const std::string data = Filler(1200);
  writer.buffer().PutBytes(data);
  writer.EndMessage();
  auto packets = sink.Packets();
  ASSERT_EQ(3u, packets.size());
  // Type 0x04, status, big-endian length, big-endian SPID 51, packet id from 1, window 0.
  EXPECT_BYTES("04 00 02 00 00 33 01 00", packets[0].substr(0, 8));
  EXPECT_BYTES("04 00 02 00 00 33 02 00", packets[1].substr(0, 8));
  EXPECT_BYTES("04 01 00 C8 00 33 03 00", packets[2].substr(0, 8));
  EXPECT_EQ(data, sink.Payload());
}

TEST(MessageWriter, PacketIdsRestartWithEachMessage) {
  CollectingSink sink;
  MessageWriter writer(sink, 60);
  writer.buffer().PutU8(1);
  writer.EndMessage();
  writer.buffer().PutU8(2);
  writer.EndMessage();
  auto packets = sink.Packets();
  ASSERT_EQ(2u, packets.size());
  EXPECT_BYTES("04 01 00 09 00 3C 01 00 01", packets[0]);
  EXPECT_BYTES("04 01 00 09 00 3C 01 00 02", packets[1]);
}

TEST(MessageWriter, AnEmptyMessageIsOneHeader) {
  CollectingSink sink;
  MessageWriter writer(sink, 51);
  writer.EndMessage();
  EXPECT_BYTES("04 01 00 08 00 33 01 00", sink.bytes);
}

TEST(MessageWriter, PacketSizeIsClampedToTheProtocolBounds) {
  CollectingSink sink;
  MessageWriter writer(sink, 51);
  writer.set_packet_size(100);
  EXPECT_EQ(512u, writer.packet_size());
  writer.set_packet_size(1 << 20);
  EXPECT_EQ(32767u, writer.packet_size());
}

TEST(MessageWriter, FlushIfFullSendsWholePacketsInBatchesAndKeepsTheRest) {
  CollectingSink sink;
  MessageWriter writer(sink, 51);
  writer.set_packet_size(512);
  writer.buffer().PutBytes(Filler(1000));
  EXPECT_FALSE(writer.FlushIfFull());
  EXPECT_TRUE(sink.bytes.empty()) << "below the threshold nothing is sent";

  const std::string data = Filler(70000);
  writer.buffer().clear();
  writer.buffer().PutBytes(data);
  EXPECT_FALSE(writer.FlushIfFull());
  EXPECT_EQ(70000u % 504u, writer.buffer().size());
  EXPECT_EQ(70000u / 504u * 512u, sink.bytes.size());
  EXPECT_EQ(5, sink.sends) << "138 packets go 32 to a send";
  for (const std::string& packet : sink.Packets()) EXPECT_EQ(0, packet[1]) << "no EOM yet";
  writer.EndMessage();
  EXPECT_EQ(data, sink.Payload());
  EXPECT_EQ(1, sink.Packets().back()[1]);
}

TEST(MessageWriter, FlushIfFullReportsAnAttention) {
  CollectingSink sink;
  sink.attention = true;
  MessageWriter writer(sink, 51);
  writer.buffer().PutBytes(Filler(100));
  EXPECT_FALSE(writer.FlushIfFull()) << "not checked before anything is sent";
  writer.buffer().PutBytes(Filler(70000));
  EXPECT_TRUE(writer.FlushIfFull());
}

}  // namespace
}  // namespace mssql_cdc::tds
