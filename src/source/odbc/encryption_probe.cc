#include "source/odbc/encryption_probe.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "tds/client_transport.h"
#include "tds/packet.h"

namespace mssql_cdc::odbc {
namespace {

// The time left until `deadline`, at least a millisecond (0 would mean no limit).
std::chrono::milliseconds Left(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

void ReceiveExactly(tds::ClientTransport& transport, std::uint8_t* out, std::size_t size,
                    std::chrono::steady_clock::time_point deadline) {
  for (std::size_t got = 0; got < size;) got += transport.Receive(out + got, size - got, Left(deadline));
}

}  // namespace

std::optional<tds::Encryption> ServerEncryption(const std::string& host, int port,
                                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  try {
    auto transport = tds::ClientTransport::Connect(host, port, deadline);
    const std::string payload = tds::BuildPreloginRequest(tds::Encryption::kOn);
    std::string packet(tds::kPacketHeaderSize, '\0');
    tds::PacketHeader header;
    header.type = static_cast<std::uint8_t>(tds::MessageType::kPrelogin);
    header.status = tds::kStatusEndOfMessage;
    header.length = static_cast<std::uint16_t>(tds::kPacketHeaderSize + payload.size());
    header.packet_id = 1;
    tds::WritePacketHeader(reinterpret_cast<std::uint8_t*>(packet.data()), header);
    packet += payload;
    transport->Send(reinterpret_cast<const std::uint8_t*>(packet.data()), packet.size(), Left(deadline));

    std::uint8_t reply_header[tds::kPacketHeaderSize];
    ReceiveExactly(*transport, reply_header, sizeof reply_header, deadline);
    const tds::PacketHeader reply = tds::ParsePacketHeader(reply_header);
    if (reply.type != static_cast<std::uint8_t>(tds::MessageType::kReply) || reply.length <= tds::kPacketHeaderSize) {
      return std::nullopt;
    }
    std::string body(reply.length - tds::kPacketHeaderSize, '\0');
    ReceiveExactly(*transport, reinterpret_cast<std::uint8_t*>(body.data()), body.size(), deadline);
    return tds::ParsePrelogin(body).encryption;
  } catch (const std::exception&) {
    return std::nullopt;  // no connection, no reply in time (ClientFailure), not a PRELOGIN reply
  }
}

}  // namespace mssql_cdc::odbc
