// Rows and key sums of keys that come in order, grouped by the slice (or bucket) each falls
// in, sent as one (slice bigint, rows bigint, sum decimal(38,0)) row as each slice ends: what
// the grid counts of statements.h and mssql-cdc-pyspark 0.8.0's bucket counts answer. SQLite's
// SUM stops at 64 bits; decimal(38,0) does not, so the sum is kept in 128.
#pragma once

#include <cstdint>
#include <optional>

#include "core/int128.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

class KeyTally {
 public:
  explicit KeyTally(tds::ResultSet& rows) : rows_(rows) {}

  void Add(std::int64_t slice, std::int64_t key) {
    if (slice_ && *slice_ != slice) Send();
    slice_ = slice;
    ++count_;
    sum_ += key;
  }
  // Sends the last slice's row.
  void Finish() {
    if (slice_) Send();
    slice_.reset();
  }

 private:
  void Send() {
    rows_.Int(*slice_);
    rows_.Int(count_);
    rows_.Text(Int128Text(sum_));
    rows_.EndRow();
    count_ = 0;
    sum_ = 0;
  }

  tds::ResultSet& rows_;
  std::optional<std::int64_t> slice_;
  std::int64_t count_ = 0;
  Int128 sum_ = 0;
};

}  // namespace mssql_cdc::sim_server
