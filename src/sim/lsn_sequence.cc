#include "sim/lsn_sequence.h"

namespace mssql_cdc::sim {
namespace {

// A log block holds a few dozen records; VLFs hold many blocks. Real values vary; these only
// need to look plausible and keep every field in range.
constexpr std::uint16_t kSlotsPerBlock = 40;
constexpr std::uint32_t kBlocksPerVlf = 0x00100000;
constexpr std::uint32_t kFirstBlock = 0x00000010;

}  // namespace

Lsn LsnSequence::Initial() {
  return Lsn(Lsn::Bytes{0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01});
}

LsnSequence::LsnSequence(const Lsn& last) : last_(last) {
  const auto& b = last.bytes();
  vlf_ = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         b[3];
  block_ = (std::uint32_t{b[4]} << 24) | (std::uint32_t{b[5]} << 16) |
           (std::uint32_t{b[6]} << 8) | b[7];
  slot_ = static_cast<std::uint16_t>((b[8] << 8) | b[9]);
}

Lsn LsnSequence::Make() const {
  return Lsn(Lsn::Bytes{static_cast<std::uint8_t>(vlf_ >> 24), static_cast<std::uint8_t>(vlf_ >> 16),
                        static_cast<std::uint8_t>(vlf_ >> 8), static_cast<std::uint8_t>(vlf_),
                        static_cast<std::uint8_t>(block_ >> 24),
                        static_cast<std::uint8_t>(block_ >> 16),
                        static_cast<std::uint8_t>(block_ >> 8), static_cast<std::uint8_t>(block_),
                        static_cast<std::uint8_t>(slot_ >> 8), static_cast<std::uint8_t>(slot_)});
}

Lsn LsnSequence::NextBlock() {
  // Block offsets are in 512-byte units and grow by the size of the block written, which
  // varies; derive a varying step from the block itself so the sequence stays deterministic.
  block_ += 0x08 + (block_ >> 3) % 5 * 0x08;
  slot_ = 1;
  if (block_ >= kBlocksPerVlf) {
    ++vlf_;
    block_ = kFirstBlock;
  }
  last_ = Make();
  return last_;
}

Lsn LsnSequence::Next() {
  if (slot_ >= kSlotsPerBlock) return NextBlock();
  ++slot_;
  last_ = Make();
  return last_;
}

Lsn LsnSequence::SkipThenNext(int records) {
  for (int i = 0; i < records; ++i) Next();
  return Next();
}

}  // namespace mssql_cdc::sim
