// Slots for binary(10) LSN and seqval result columns, with the check every LSN read needs:
// a value that is not 10 bytes is the server's fault and becomes a SourceError naming the
// column, never a misread LSN.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/lsn.h"
#include "source/odbc/fetch_column.h"

namespace mssql_cdc::odbc {

// Room for longer values than an LSN, so that a wrong length is reported as such.
using LsnSlot = std::array<std::uint8_t, 32>;

class LsnSlots {
 public:
  explicit LsnSlots(std::string column) : column_(std::move(column)) {}
  ResultSlots* slots() { return &slots_; }
  bool IsNull(std::size_t slot) const { return slots_.IsNull(slot); }
  // The 10 bytes of the LSN in `slot`.
  const std::uint8_t* At(std::size_t slot) const {
    const SQLLEN length = slots_.Length(slot);
    if (length != static_cast<SQLLEN>(Lsn::kSize)) {
      throw SourceError("the server returned an LSN of " + std::to_string(length) +
                        " bytes in column " + column_ + ", where SQL Server LSNs are binary(10)");
    }
    return slots_.Value(slot).data();
  }

 private:
  std::string column_;
  FixedSlots<LsnSlot> slots_{SQL_C_BINARY};
};

// The LSN of a one-value result read with SQLGetData; nullopt for NULL. Same check.
inline std::optional<Lsn> LsnFromBytes(const std::optional<std::string>& bytes,
                                       const std::string& what) {
  if (!bytes) return std::nullopt;
  if (bytes->size() != Lsn::kSize) {
    throw SourceError("the server returned an LSN of " + std::to_string(bytes->size()) +
                      " bytes for " + what + ", where SQL Server LSNs are binary(10)");
  }
  return Lsn::FromBytes(bytes->data(), bytes->size());
}

}  // namespace mssql_cdc::odbc
