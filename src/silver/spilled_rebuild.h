// A silver rebuild in bounded memory (docs/silver.md, "Rebuilds in bounded memory"): silver
// becomes the latest image of each key among bronze rows of any number.
//
// Rows arrive in any order. Once the rows held fill half the memory budget, they are cut to
// each key's latest image, ordered by key (sortable_keys.h) and spilled to a run file of their
// own (spill_runs.h); the last run stays in memory. Merging takes each key's latest image
// across runs, a batch of each run at a time; a key whose latest image deletes it is written
// nowhere. When there are more runs than the budget can hold a batch of each, the oldest are
// first merged into one (deletes kept, so that they still outrank older images).
//
// Peak memory is about the budget whatever the number of rows: a run and its sorted copy
// while a run is cut, one batch per run and the rows waiting to be written while merging.
// The runs stay on disk until the object goes, so WriteTo can run again (a commit retried).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mssql_cdc {

namespace delta {
class DataFileStream;
}

class SpillDirectory;

struct RebuildBudget {
  std::int64_t memory_bytes = 256LL << 20;  // [engine] memory_budget
  std::string spill_directory;              // [engine] spill_directory; empty: $TMPDIR or /tmp
};

struct RebuildCounts {
  std::int64_t upserted = 0;  // keys written
  std::int64_t deleted = 0;   // keys whose latest image deletes them
};

class SpilledRebuild {
 public:
  // `silver`: the schema images are written in; `bronze`: the schema of the rows given to Add
  // (its ranking columns are kept beside silver's until the merge). ConfigError for a budget
  // under 1 MiB.
  SpilledRebuild(std::vector<std::string> keys, const arrow::Schema& bronze,
                 std::shared_ptr<arrow::Schema> silver, RebuildBudget budget);
  ~SpilledRebuild();
  SpilledRebuild(const SpilledRebuild&) = delete;
  SpilledRebuild& operator=(const SpilledRebuild&) = delete;

  // Bronze rows to rebuild from.
  void Add(const arrow::RecordBatch& bronze_rows);
  // Every key's latest upsert in key order, in silver's schema, through `out`. Can be called
  // again; the first call ends the adding.
  RebuildCounts WriteTo(delta::DataFileStream& out);

  std::int64_t rows_added() const { return rows_added_; }
  int runs_spilled() const { return runs_spilled_; }
  std::int64_t spilled_bytes() const { return spilled_bytes_; }

 private:
  struct Run;
  class Merge;

  // The held rows cut to their keys' latest images, in key order, as batches of a run.
  std::vector<std::shared_ptr<arrow::RecordBatch>> CutHeldRows();
  void SpillHeldRows();
  // Merges the oldest runs into one until a batch of each fits the budget.
  void MergeDownToFanIn();
  std::int64_t SpillBatchBytes() const;

  std::vector<std::string> keys_;
  std::shared_ptr<arrow::Schema> silver_;
  std::shared_ptr<arrow::Schema> run_schema_;  // silver's columns, then the ranking ones it lacks
  RebuildBudget budget_;
  std::unique_ptr<SpillDirectory> spill_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> held_;
  std::int64_t held_bytes_ = 0;
  std::vector<std::unique_ptr<Run>> runs_;
  bool adding_done_ = false;
  std::int64_t rows_added_ = 0;
  int runs_spilled_ = 0;
  std::int64_t spilled_bytes_ = 0;
};

}  // namespace mssql_cdc
