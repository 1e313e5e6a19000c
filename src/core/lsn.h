// A SQL Server log sequence number: 10 bytes, ordered as an unsigned big-endian number.
// Text form is "0x" followed by 20 uppercase hex digits, so string order equals LSN order.
// `__$seqval` values share the format and the arithmetic.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc {

class Lsn {
 public:
  static constexpr std::size_t kSize = 10;
  using Bytes = std::array<std::uint8_t, kSize>;

  // The zero LSN, 0x00000000000000000000 (what SQL Server returns for "no such instance").
  constexpr Lsn() : bytes_{} {}
  explicit constexpr Lsn(const Bytes& bytes) : bytes_(bytes) {}

  // Strict: "0x" (either case) and exactly 20 hex digits (either case). Throws ConfigError.
  static Lsn Parse(std::string_view text);
  // As a user may write it (startingLsn): "0x" optional, 1 to 20 hex digits, left-padded.
  static Lsn ParseLenient(std::string_view text);
  static std::optional<Lsn> TryParse(std::string_view text);
  // From raw bytes as SQL Server stores binary(10); `size` must be 10.
  static Lsn FromBytes(const void* data, std::size_t size);
  // The low 64 bits given, the high 16 bits zero (tests and the simulator).
  static Lsn FromUint64(std::uint64_t value);

  std::string ToString() const;
  const Bytes& bytes() const { return bytes_; }
  const std::uint8_t* data() const { return bytes_.data(); }
  bool IsZero() const;

  // sys.fn_cdc_increment_lsn / sys.fn_cdc_decrement_lsn: the next and previous 80-bit value.
  // Throws ConfigError on overflow past 0xFF..FF or below zero.
  Lsn Increment() const;
  Lsn Decrement() const;

  friend constexpr std::strong_ordering operator<=>(const Lsn& a, const Lsn& b) {
    for (std::size_t i = 0; i < kSize; ++i) {
      if (a.bytes_[i] != b.bytes_[i]) return a.bytes_[i] <=> b.bytes_[i];
    }
    return std::strong_ordering::equal;
  }
  friend constexpr bool operator==(const Lsn& a, const Lsn& b) = default;

 private:
  Bytes bytes_;
};

using Seqval = Lsn;

}  // namespace mssql_cdc
