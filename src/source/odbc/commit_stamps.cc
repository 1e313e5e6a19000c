#include "source/odbc/commit_stamps.h"

namespace mssql_cdc::odbc {

std::int64_t CommitStamps::Start(const std::uint8_t* lsn, LocalMicros local) {
  std::memcpy(progress_.commit_lsn, lsn, Lsn::kSize);
  progress_.has_commit = true;
  if (!progress_.fed_any) {
    progress_.fed_any = true;
    if (commit_before_ && clock_.SecondReading(local)) progress_.converter.Next(*commit_before_);
  }
  progress_.commit_ts = progress_.converter.Next(local).value;
  return progress_.commit_ts;
}

}  // namespace mssql_cdc::odbc
