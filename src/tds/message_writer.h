// The sending side of a connection: cuts the reply being encoded into packets of the
// negotiated size and sends them as they fill, so a result of any size streams through a
// bounded buffer.
//
// Tokens are encoded into buffer(); FlushIfFull() (called between rows) sends the full
// packets once enough has gathered, several per system call, and reports whether the client
// has sent an Attention meanwhile. EndMessage() sends the rest with the EOM bit. Replies are
// packet type 0x04 with the connection's SPID and packet ids counting from 1.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include "tds/packet.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {

// Where packets go: the socket, or a test's byte collector.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  // Sends these bytes in order, completely. Throws ReplyAborted(kConnectionLost) when the
  // peer is gone.
  virtual void Send(const iovec* parts, int count) = 0;
  // Whether the client has sent an Attention since the reply began; never blocks.
  virtual bool AttentionArrived() = 0;
};

// Ends a reply early: the client cancelled (Attention) or the connection is gone. It passes
// through QueryHandler::Execute and is deliberately not a std::exception, so a handler that
// turns exceptions into SQL errors does not swallow it.
class ReplyAborted {
 public:
  enum class Reason { kAttention, kConnectionLost };
  explicit ReplyAborted(Reason reason) : reason_(reason) {}
  Reason reason() const { return reason_; }

 private:
  Reason reason_;
};

class MessageWriter {
 public:
  MessageWriter(PacketSink& sink, std::uint16_t spid);

  void set_packet_size(std::size_t packet_size);
  std::size_t packet_size() const { return packet_size_; }
  std::uint16_t spid() const { return spid_; }

  WireBuffer& buffer() { return buffer_; }

  // At a token boundary: sends the full packets once enough bytes wait. Returns true when
  // the client has sent an Attention (checked only after sending).
  bool FlushIfFull();
  // Sends what is left, the last packet marked EOM, and starts the next message.
  void EndMessage();

 private:
  std::size_t payload_size() const { return packet_size_ - kPacketHeaderSize; }
  // Sends every full packet now, keeping the partial last one.
  void FlushFullPackets();
  // Sends `size` bytes at `data` as packets; the last one carries EOM if `end`.
  void SendPackets(const std::uint8_t* data, std::size_t size, bool end);

  PacketSink& sink_;
  std::uint16_t spid_;
  std::size_t packet_size_ = kDefaultPacketSize;
  std::size_t flush_threshold_ = 0;
  std::uint8_t next_packet_id_ = 1;
  WireBuffer buffer_;
};

}  // namespace mssql_cdc::tds
