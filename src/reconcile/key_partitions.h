// Rows of one side of a Tier 2 comparison split by a hash of their key, so that a range of any
// size is compared a part at a time: equal keys (as EncodeKeys matches them, NULL equal to NULL)
// land in the same part on both sides when both are split into the same number of parts. One
// part is held in memory; more are spilled to Arrow IPC files in a SpillDirectory, written as
// the rows arrive and read back one part at a time.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "silver/spill_runs.h"

namespace mssql_cdc {

class KeyPartitions {
 public:
  // `spill` must outlive this object; it is only used when `parts` > 1.
  KeyPartitions(SpillDirectory* spill, std::vector<std::string> keys, int parts);
  ~KeyPartitions();
  KeyPartitions(const KeyPartitions&) = delete;
  KeyPartitions& operator=(const KeyPartitions&) = delete;

  // Adds rows, all of the first batch's schema (which may have no rows). Not after Finish.
  void Add(const arrow::RecordBatch& batch);
  // Closes the part files; the bytes they hold (0 when in memory).
  std::int64_t Finish();

  int parts() const { return static_cast<int>(parts_.size()); }
  std::int64_t rows_in(int part) const { return parts_[static_cast<std::size_t>(part)].rows; }
  // Part `part`'s rows, read back after Finish (a table of no rows when it has none); at least
  // one batch must have been added.
  std::shared_ptr<arrow::Table> Part(int part) const;

 private:
  struct PartFile {
    std::string path;
    std::unique_ptr<RunWriter> writer;  // null until the part's first row, and after Finish
    std::int64_t rows = 0;
  };

  SpillDirectory* spill_;
  std::vector<std::string> keys_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<PartFile> parts_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> held_;  // the rows of a single part
};

// How many parts keep a side of `rows` rows within `piece_rows` rows a part: 1 when it fits,
// else a quarter more than the least, so that an uneven hash rarely overfills a part.
int PartsFor(std::int64_t rows, std::int64_t piece_rows);

}  // namespace mssql_cdc
