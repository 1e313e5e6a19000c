#include "feed/snapshot_scan.h"

#include <arrow/api.h>

#include "core/errors.h"
#include "engine/batch_reader.h"
#include "feed/change_feed.h"
#include "snapshot/range_plan.h"
#include "snapshot/snapshot_stamp.h"
#include "core/arrow_status.h"
#include "source/name_match.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

struct Opened {
  std::unique_ptr<Source> source;
  CaptureInstanceInfo instance;
  std::vector<CapturedColumn> columns;
};

Opened Open(const SourceOptions& options, SourceFactory& factory) {
  ChangeFeed::CheckOptions(options);
  if (!factory) factory = MakeSourceFactory(options);
  Opened opened;
  opened.source = factory();
  opened.instance = opened.source->ResolveCaptureInstance(options.capture_instance);
  opened.columns = opened.source->CapturedColumns(opened.instance.name);
  return opened;
}

std::shared_ptr<arrow::Schema> SchemaOf(const SourceOptions& options,
                                        const std::vector<CapturedColumn>& columns) {
  auto schema = OutputSchema(columns, options.include_command_id);
  if (!options.snapshot_chunks) return schema;
  return *schema->AddField(schema->num_fields(), arrow::field(std::string(kChunkColumn), arrow::int32()));
}

// The snapshotChunks ranges, their key checked against the captured columns' types.
std::vector<SnapshotScanRange> ChunkRanges(const SourceOptions& options, const Opened& opened,
                                           const std::vector<std::string>& key) {
  std::vector<std::string> names;
  for (const auto& column : opened.columns) names.push_back(column.name);
  for (const auto& name : key) {
    const int i = FindName(names, name);
    if (i >= 0 && !CanBoundRange(opened.columns[i].type)) {
      throw ConfigError("option snapshotChunks: key column '" + name + "' is " +
                        opened.columns[i].type.ToString() +
                        ", which cannot bound a range; the table cannot be read in chunks "
                        "by this key (give snapshotKeys of other types)");
    }
  }
  if (key.empty()) {
    throw ConfigError("option snapshotChunks: capture instance '" + opened.instance.name +
                      "' has no index columns to bound chunks by; give snapshotKeys");
  }
  std::vector<SnapshotScanRange> ranges;
  for (const auto& entry : nlohmann::json::parse(*options.snapshot_chunks)) {
    ranges.push_back(SnapshotScanRange{entry[1], entry[2], entry[0].get<std::int32_t>()});
  }
  return ranges;
}

}  // namespace

std::string SnapshotScan::ToJson() const {
  nlohmann::json ranges_json = nlohmann::json::array();
  for (const auto& range : ranges) {
    ranges_json.push_back({{"lo", range.lo},
                           {"hi", range.hi},
                           {"chunk", range.chunk ? nlohmann::json(*range.chunk) : nullptr}});
  }
  return nlohmann::json{{"stamp", nlohmann::json::parse(stamp.ToJson())},
                        {"keys", key_columns},
                        {"ranges", ranges_json}}
      .dump();
}

SnapshotScan SnapshotScan::FromJson(std::string_view text) {
  try {
    const auto json = nlohmann::json::parse(text);
    SnapshotScan scan;
    scan.stamp = Offset::FromJson(json.at("stamp").dump());
    scan.key_columns = json.at("keys").get<std::vector<std::string>>();
    for (const auto& range : json.at("ranges")) {
      SnapshotScanRange r{range.at("lo"), range.at("hi"), std::nullopt};
      if (!range.at("chunk").is_null()) r.chunk = range.at("chunk").get<std::int32_t>();
      scan.ranges.push_back(std::move(r));
    }
    return scan;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("a snapshot scan is not the JSON the planner wrote: ") + e.what());
  }
}

std::shared_ptr<arrow::Schema> SnapshotScanSchema(const SourceOptions& options,
                                                  SourceFactory factory) {
  const Opened opened = Open(options, factory);
  return SchemaOf(options, opened.columns);
}

SnapshotScan PlanSnapshotScan(const SourceOptions& options, int partitions,
                              SourceFactory factory) {
  const Opened opened = Open(options, factory);
  const SourceClock clock = ResolveSourceClock(*opened.source, options.source_time_zone);
  SnapshotScan scan;
  // Recorded before any range is planned or read.
  scan.stamp = SnapshotStamp(*opened.source, clock, opened.instance, options.snapshot_lsn);
  const std::vector<std::string> key =
      options.snapshot_keys.value_or(opened.instance.index_columns);
  if (options.snapshot_chunks) {
    scan.key_columns = key;
    scan.ranges = ChunkRanges(options, opened, key);
    return scan;
  }
  RangePlanRequest request;
  request.instance = opened.instance;
  request.columns = opened.columns;
  request.key_columns = key;
  request.ranges = partitions;
  const RangePlan plan = PlanSnapshotRanges(request, *opened.source);
  scan.key_columns = plan.key_columns;
  for (const auto& range : plan.ranges) scan.ranges.push_back({range.lo, range.hi, std::nullopt});
  return scan;
}

Offset SnapshotScanOffset(const SourceOptions& options, const Lsn& lsn, SourceFactory factory) {
  const Opened opened = Open(options, factory);
  const SourceClock clock = ResolveSourceClock(*opened.source, options.source_time_zone);
  return SnapshotStamp(*opened.source, clock, opened.instance, lsn);
}

Offset SeedPoint(const SourceOptions& options, const SeedAsOf& as_of, SourceFactory factory) {
  const Opened opened = Open(options, factory);
  const SourceClock clock = ResolveSourceClock(*opened.source, options.source_time_zone);
  return ResolveSeedPoint(*opened.source, clock, opened.instance, as_of);
}

std::vector<std::pair<std::string, std::optional<std::string>>> SeedColumnsFor(
    const SourceOptions& options, const std::vector<std::string>& copy_columns,
    bool allow_missing_columns, SourceFactory factory) {
  const Opened opened = Open(options, factory);
  const SeedColumns matched = MatchSeedColumns(
      opened.columns, options.snapshot_keys.value_or(opened.instance.index_columns), copy_columns,
      allow_missing_columns);
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  for (std::size_t i = 0; i < opened.columns.size(); ++i) {
    out.emplace_back(opened.columns[i].name, matched.from[i]);
  }
  return out;
}

std::unique_ptr<arrow::RecordBatchReader> ReadSnapshotScanRange(const SourceOptions& options,
                                                                const SnapshotScan& scan,
                                                                std::size_t range,
                                                                SourceFactory factory) {
  if (range >= scan.ranges.size()) {
    throw InternalError("snapshot scan range " + std::to_string(range) + " of " +
                        std::to_string(scan.ranges.size()));
  }
  Opened opened = Open(options, factory);
  const SnapshotScanRange& r = scan.ranges[range];
  SnapshotReadRequest read;
  read.capture_instance = options.capture_instance;
  read.key_columns = scan.key_columns;
  read.lo = r.lo;
  read.hi = r.hi;
  read.snapshot_lsn = scan.stamp.lsn;
  read.snapshot_commit_ts = scan.stamp.commit_ts.value_or(UtcMicros{});
  read.batch_rows = options.arrow_batch_size;
  auto rows = opened.source->ReadSnapshot(read);
  auto output_schema = OutputSchema(opened.columns, options.include_command_id);
  auto schema = SchemaOf(options, opened.columns);
  // The batches as they come, `_chunk` appended; the reader keeps the Source alive.
  class ChunkReader final : public arrow::RecordBatchReader {
   public:
    ChunkReader(std::unique_ptr<Source> source, std::unique_ptr<arrow::RecordBatchReader> rows,
                std::shared_ptr<arrow::Schema> output_schema, std::shared_ptr<arrow::Schema> schema,
                std::optional<std::int32_t> chunk)
        : source_(std::move(source)), rows_(std::move(rows)),
          output_schema_(std::move(output_schema)), schema_(std::move(schema)), chunk_(chunk) {}
    std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
    arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
      ARROW_RETURN_NOT_OK(rows_->ReadNext(batch));
      if (!*batch) return arrow::Status::OK();
      // The schema Spark was told, field for field (includeCommandId), whatever the backend's
      // batches carry.
      *batch = AlignToBronze(*batch, output_schema_, std::nullopt, std::nullopt);
      if (schema_->num_fields() == output_schema_->num_fields()) return arrow::Status::OK();
      std::shared_ptr<arrow::Array> chunk;
      if (chunk_) {
        ARROW_ASSIGN_OR_RAISE(chunk, arrow::MakeArrayFromScalar(arrow::Int32Scalar(*chunk_),
                                                                (*batch)->num_rows()));
      } else {
        ARROW_ASSIGN_OR_RAISE(chunk, arrow::MakeArrayOfNull(arrow::int32(), (*batch)->num_rows()));
      }
      ARROW_ASSIGN_OR_RAISE(*batch, (*batch)->AddColumn((*batch)->num_columns(),
                                                        schema_->field(schema_->num_fields() - 1),
                                                        chunk));
      return arrow::Status::OK();
    }

   private:
    std::unique_ptr<Source> source_;
    std::unique_ptr<arrow::RecordBatchReader> rows_;
    std::shared_ptr<arrow::Schema> output_schema_;
    std::shared_ptr<arrow::Schema> schema_;
    std::optional<std::int32_t> chunk_;
  };
  return std::make_unique<ChunkReader>(std::move(opened.source), std::move(rows),
                                       std::move(output_schema), std::move(schema), r.chunk);
}

}  // namespace mssql_cdc
