#include "tds/message_writer.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace mssql_cdc::tds {
namespace {

// Packets handed to one Send call: few system calls without a large header array.
constexpr std::size_t kPacketsPerSend = 32;
// Buffered bytes that trigger sending at a row boundary (at least one packet).
constexpr std::size_t kFlushBytes = 64 * 1024;

}  // namespace

MessageWriter::MessageWriter(PacketSink& sink, std::uint16_t spid) : sink_(sink), spid_(spid) {
  set_packet_size(kDefaultPacketSize);
}

void MessageWriter::set_packet_size(std::size_t packet_size) {
  packet_size_ = std::clamp(packet_size, kMinPacketSize, kMaxPacketSize);
  flush_threshold_ = std::max(kFlushBytes, payload_size());
}

bool MessageWriter::FlushIfFull() {
  if (buffer_.size() < flush_threshold_) return false;
  FlushFullPackets();
  return sink_.AttentionArrived();
}

void MessageWriter::FlushFullPackets() {
  const std::size_t whole = buffer_.size() / payload_size() * payload_size();
  if (whole == 0) return;
  SendPackets(buffer_.data(), whole, false);
  buffer_.Erase(0, whole);
}

void MessageWriter::EndMessage() {
  SendPackets(buffer_.data(), buffer_.size(), true);
  buffer_.clear();
  next_packet_id_ = 1;
}

void MessageWriter::SendPackets(const std::uint8_t* data, std::size_t size, bool end) {
  const std::size_t payload = payload_size();
  std::size_t packets = (size + payload - 1) / payload;
  if (packets == 0 && end) packets = 1;  // an empty message is still one packet
  std::array<std::array<std::uint8_t, kPacketHeaderSize>, kPacketsPerSend> headers;
  std::array<iovec, 2 * kPacketsPerSend> parts;
  std::size_t offset = 0;
  std::size_t done_packets = 0;
  while (done_packets < packets) {
    const std::size_t batch = std::min(kPacketsPerSend, packets - done_packets);
    int count = 0;
    for (std::size_t i = 0; i < batch; ++i) {
      const std::size_t chunk = std::min(payload, size - offset);
      const bool last = done_packets + i + 1 == packets;
      PacketHeader header;
      header.type = static_cast<std::uint8_t>(MessageType::kReply);
      header.status = (last && end) ? kStatusEndOfMessage : 0;
      header.length = static_cast<std::uint16_t>(chunk + kPacketHeaderSize);
      header.spid = spid_;
      header.packet_id = next_packet_id_++;
      WritePacketHeader(headers[i].data(), header);
      parts[count++] = iovec{headers[i].data(), kPacketHeaderSize};
      if (chunk != 0) {
        parts[count++] = iovec{const_cast<std::uint8_t*>(data + offset), chunk};
      }
      offset += chunk;
    }
    sink_.Send(parts.data(), count);
    done_packets += batch;
  }
}

}  // namespace mssql_cdc::tds
