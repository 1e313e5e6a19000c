// Hands out LSNs shaped like SQL Server's: VLF sequence number (4 bytes), log block offset
// (4 bytes) and slot in the block (2 bytes), so they read like real ones
// (0000002A:00000118:0003) and leave the gaps a real log has between the records CDC sees.
// Each LSN is larger than every one before; the sequence is deterministic.
#pragma once

#include <cstdint>

#include "core/lsn.h"

namespace mssql_cdc::sim {

class LsnSequence {
 public:
  // What a new database starts from: 0x0000002A000001000001.
  static Lsn Initial();

  explicit LsnSequence(const Lsn& last);

  // The next log record's LSN.
  Lsn Next();
  // Skips `records` log records the capture process does not see, then the next LSN.
  Lsn SkipThenNext(int records);
  // The first record of a fresh log block (what an idle period or a checkpoint looks like).
  Lsn NextBlock();

  const Lsn& last() const { return last_; }

 private:
  Lsn Make() const;
  std::uint32_t vlf_;
  std::uint32_t block_;
  std::uint16_t slot_;
  Lsn last_;
};

}  // namespace mssql_cdc::sim
