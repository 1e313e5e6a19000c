// The bytes of a TDS message being built, and a bounds-checked reader of one received.
//
// WireBuffer is a growable byte array with little-endian appends: every token and value
// encoder writes straight into it, so a row is encoded without allocating per value.
// WireReader walks a received payload; reading past its end throws SourceError, so a
// truncated or lying client message fails cleanly instead of reading out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace mssql_cdc::tds {

class WireBuffer {
 public:
  WireBuffer() = default;
  WireBuffer(const WireBuffer&) = delete;
  WireBuffer& operator=(const WireBuffer&) = delete;

  std::uint8_t* data() { return data_.get(); }
  const std::uint8_t* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_.get()), size_};
  }

  // Room for `n` more bytes at the end; the caller fills them.
  std::uint8_t* Extend(std::size_t n) {
    if (size_ + n > capacity_) Grow(size_ + n);
    std::uint8_t* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void Truncate(std::size_t new_size) {
    if (new_size < size_) size_ = new_size;
  }
  // Removes `count` bytes at `offset`, moving what follows down.
  void Erase(std::size_t offset, std::size_t count) {
    std::memmove(data_.get() + offset, data_.get() + offset + count, size_ - offset - count);
    size_ -= count;
  }

  void PutU8(std::uint8_t v) { *Extend(1) = v; }
  void PutU16(std::uint16_t v) { Store16(Extend(2), v); }
  void PutU32(std::uint32_t v) { Store32(Extend(4), v); }
  void PutU64(std::uint64_t v) { Store64(Extend(8), v); }
  void PutBytes(const void* bytes, std::size_t n) {
    if (n != 0) std::memcpy(Extend(n), bytes, n);
  }
  void PutBytes(std::string_view bytes) { PutBytes(bytes.data(), bytes.size()); }
  // `utf8` as UTF-16LE, U+FFFD for each byte that is not valid UTF-8 (text_encoding.h).
  void PutUtf16(std::string_view utf8);

  static void Store16(std::uint8_t* p, std::uint16_t v) {
    p[0] = static_cast<std::uint8_t>(v);
    p[1] = static_cast<std::uint8_t>(v >> 8);
  }
  static void Store32(std::uint8_t* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  static void Store64(std::uint8_t* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }

 private:
  void Grow(std::size_t needed) {
    std::size_t capacity = capacity_ == 0 ? 8192 : capacity_;
    while (capacity < needed) capacity *= 2;
    auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(capacity);
    if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class WireReader {
 public:
  // `what` names the message in errors ("LOGIN7", "RPC").
  WireReader(std::string_view bytes, const char* what) : bytes_(bytes), what_(what) {}

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool AtEnd() const { return pos_ == bytes_.size(); }
  std::uint8_t PeekU8() const;

  std::uint8_t U8();
  std::uint16_t U16();
  std::uint32_t U32();
  std::uint64_t U64();
  std::uint16_t U16BigEndian();
  std::string_view Bytes(std::size_t n);
  void Skip(std::size_t n) { Bytes(n); }
  // A B_VARCHAR (1-byte character count) or US_VARCHAR (2-byte count) of UCS-2, as UTF-8.
  std::string BVarChar();
  std::string UsVarChar();

  [[noreturn]] void Fail(const std::string& why) const;

 private:
  void Need(std::size_t n) const;

  std::string_view bytes_;
  std::size_t pos_ = 0;
  const char* what_;
};

}  // namespace mssql_cdc::tds
