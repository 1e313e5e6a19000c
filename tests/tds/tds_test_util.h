// Helpers for the TDS tests: hex byte strings, a packet sink that collects what a writer
// sends, and a reply parser that splits a token stream into its DONE statuses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tds/message_writer.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds::testing {

// "04 01 00 2F" -> bytes; whitespace and newlines are ignored.
inline std::string Hex(std::string_view text) {
  std::string out;
  int nibble = -1;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      continue;
    }
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<char>(nibble << 4 | v));
      nibble = -1;
    }
  }
  return out;
}

// Bytes as "04 01 00 2F", for readable failure messages.
inline std::string ToHex(std::string_view bytes) {
  static const char* kDigits = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i != 0) out.push_back(' ');
    auto b = static_cast<unsigned char>(bytes[i]);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

#define EXPECT_BYTES(expected_hex, actual) \
  EXPECT_EQ(::mssql_cdc::tds::testing::ToHex(::mssql_cdc::tds::testing::Hex(expected_hex)), \
            ::mssql_cdc::tds::testing::ToHex(actual))

// UTF-16LE of ASCII text, for building requests by hand.
inline std::string Ucs2(std::string_view ascii) {
  std::string out;
  for (char c : ascii) {
    out.push_back(c);
    out.push_back('\0');
  }
  return out;
}

inline std::string Le16(std::uint16_t v) {
  return std::string{static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)};
}
inline std::string Le32(std::uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// Collects the packets a MessageWriter sends.
class CollectingSink final : public PacketSink {
 public:
  void Send(const iovec* parts, int count) override {
    for (int i = 0; i < count; ++i) {
      bytes.append(static_cast<const char*>(parts[i].iov_base), parts[i].iov_len);
    }
    ++sends;
  }
  bool AttentionArrived() override { return attention; }

  // The payloads of the packets sent, headers removed and checked.
  std::vector<std::string> Packets() const {
    std::vector<std::string> packets;
    std::size_t pos = 0;
    while (pos + 8 <= bytes.size()) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data() + pos);
      std::size_t length = (p[2] << 8) | p[3];
      packets.push_back(bytes.substr(pos, length));
      pos += length;
    }
    EXPECT_EQ(pos, bytes.size()) << "trailing bytes after the last packet";
    return packets;
  }
  // Every payload concatenated.
  std::string Payload() const {
    std::string payload;
    for (const std::string& packet : Packets()) payload.append(packet.substr(8));
    return payload;
  }

  std::string bytes;
  int sends = 0;
  bool attention = false;
};

}  // namespace mssql_cdc::tds::testing
