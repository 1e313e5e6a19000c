// BackfillTables over Delta tables at paths, for the native engine: bronze and the plans
// table next to it, the facts table (read back from its path, written through the process's
// GroupedAppender), and the Sources that read a wave's chunks in parallel, each chunk
// streaming into data files of its own that one bronze commit names.
#pragma once

#include <memory>
#include <string>

#include "delta/grouped_appender.h"
#include "delta/table.h"
#include "engine/backfill.h"
#include "source/source_pool.h"

namespace mssql_cdc {

struct DeltaBackfillConfig {
  std::string target;         // bronze, as the facts rows name it
  std::string facts_table;    // path
  std::string plans_table;    // path
  std::string checkpoint;     // for the staged list of a wave's files
  std::shared_ptr<arrow::Schema> bronze_schema;
  delta::WriteOptions write;
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
};

class DeltaBackfillTables final : public BackfillTables {
 public:
  // `first_source` reads a wave's first chunk; the others borrow from `sources`. `bronze` is
  // this object's own (a stream writing the same table holds another).
  DeltaBackfillTables(DeltaBackfillConfig config, delta::DeltaTable bronze,
                      delta::GroupedAppender& facts, Source& first_source, SourcePool& sources);

  std::vector<SnapshotEvent> SnapshotEvents() override;
  std::optional<std::pair<double, double>> NewestHeadroom(const std::string& app_id) override;
  std::optional<std::vector<std::string>> PlansColumns() override;
  std::optional<ChunkPlan> ReadPlan(const std::string& app_id, const Lsn& snapshot) override;
  bool WritePlan(const std::shared_ptr<arrow::RecordBatch>& rows, const delta::Txn& txn) override;
  std::pair<std::int64_t, std::optional<std::string>> LastWave(const std::string& txn_app_id) override;
  std::map<int, std::int64_t> ChunkRows(const Lsn& snapshot) override;
  WaveWritten AppendWave(const WaveRead& wave, const delta::Txn& txn,
                         const std::function<std::string(const WaveWritten&)>& metadata) override;
  void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& rows, const delta::Txn& txn) override;
  std::optional<FoundSnapshot> FindSnapshot(const std::vector<std::string>& instances) override;

 private:
  DeltaBackfillConfig config_;
  delta::DeltaTable bronze_;
  delta::GroupedAppender& facts_;
  Source& first_source_;
  SourcePool& sources_;
};

// The snapshot events (event not NULL) among the facts rows of `target`.
std::vector<SnapshotEvent> ReadSnapshotEvents(const delta::DeltaTable& facts, const std::string& target);
// The same among facts rows already read.
std::vector<SnapshotEvent> SnapshotEventsOf(const arrow::Table& rows);

}  // namespace mssql_cdc
