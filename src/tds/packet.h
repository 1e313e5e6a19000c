// TDS packets: the 8-byte header every message is cut into, and the message and token codes.
//
// A message is one or more packets of one type; the last has the EOM status bit. Length and
// SPID in the header are big-endian (everything inside a message is little-endian). The
// server answers every client message, PRELOGIN included, with packets of type 0x04.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mssql_cdc::tds {

inline constexpr std::size_t kPacketHeaderSize = 8;
// The size a connection uses until LOGIN7 negotiates another, and the bounds it may take.
inline constexpr std::size_t kDefaultPacketSize = 4096;
inline constexpr std::size_t kMinPacketSize = 512;
inline constexpr std::size_t kMaxPacketSize = 32767;
// Over TLS, as SQL Server does: a packet fits one TLS record (16 KiB), and ODBC Driver 18
// stops reading (spinning in SQLFetch) when a packet spans two.
inline constexpr std::size_t kMaxEncryptedPacketSize = 16383;

enum class MessageType : std::uint8_t {
  kSqlBatch = 0x01,
  kRpc = 0x03,
  kReply = 0x04,
  kAttention = 0x06,
  kTransactionManager = 0x0E,
  kLogin7 = 0x10,
  kPrelogin = 0x12,
};

inline constexpr std::uint8_t kStatusEndOfMessage = 0x01;

struct PacketHeader {
  std::uint8_t type = 0;
  std::uint8_t status = 0;
  std::uint16_t length = 0;  // header included
  std::uint16_t spid = 0;
  std::uint8_t packet_id = 0;
};

inline PacketHeader ParsePacketHeader(const std::uint8_t* p) {
  return PacketHeader{p[0], p[1], static_cast<std::uint16_t>((p[2] << 8) | p[3]),
                      static_cast<std::uint16_t>((p[4] << 8) | p[5]), p[6]};
}

inline void WritePacketHeader(std::uint8_t* p, const PacketHeader& h) {
  p[0] = h.type;
  p[1] = h.status;
  p[2] = static_cast<std::uint8_t>(h.length >> 8);
  p[3] = static_cast<std::uint8_t>(h.length);
  p[4] = static_cast<std::uint8_t>(h.spid >> 8);
  p[5] = static_cast<std::uint8_t>(h.spid);
  p[6] = h.packet_id;
  p[7] = 0;  // window, unused
}

// Token types of a reply (MS-TDS 2.2.7).
namespace token {
inline constexpr std::uint8_t kReturnStatus = 0x79;
inline constexpr std::uint8_t kColMetadata = 0x81;
inline constexpr std::uint8_t kError = 0xAA;
inline constexpr std::uint8_t kInfo = 0xAB;
inline constexpr std::uint8_t kReturnValue = 0xAC;
inline constexpr std::uint8_t kLoginAck = 0xAD;
inline constexpr std::uint8_t kFeatureExtAck = 0xAE;
inline constexpr std::uint8_t kRow = 0xD1;
inline constexpr std::uint8_t kNbcRow = 0xD2;
inline constexpr std::uint8_t kEnvChange = 0xE3;
inline constexpr std::uint8_t kDone = 0xFD;
inline constexpr std::uint8_t kDoneProc = 0xFE;
inline constexpr std::uint8_t kDoneInProc = 0xFF;
}  // namespace token

// DONE status bits.
namespace done {
inline constexpr std::uint16_t kFinal = 0x00;
inline constexpr std::uint16_t kMore = 0x01;
inline constexpr std::uint16_t kError = 0x02;
inline constexpr std::uint16_t kCount = 0x10;
inline constexpr std::uint16_t kAttention = 0x20;
}  // namespace done

// TDS versions as LOGIN7 and LOGINACK carry them.
inline constexpr std::uint32_t kTds72 = 0x72090002;
inline constexpr std::uint32_t kTds73B = 0x730B0003;
inline constexpr std::uint32_t kTds74 = 0x74000004;

}  // namespace mssql_cdc::tds
