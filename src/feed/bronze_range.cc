#include "feed/bronze_range.h"

#include <arrow/record_batch.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/data_file_stream.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

nlohmann::json TextOrNull(const std::optional<std::string>& text) {
  return text ? nlohmann::json(*text) : nlohmann::json();
}

nlohmann::json MicrosOrNull(const std::optional<UtcMicros>& micros) {
  return micros ? nlohmann::json(micros->value) : nlohmann::json();
}

std::optional<std::string> OptionalText(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::string>();
}

std::optional<UtcMicros> OptionalMicros(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return UtcMicros{value.get<std::int64_t>()};
}

}  // namespace

std::string BronzeRangeFiles::ToJson() const {
  nlohmann::json files_json = nlohmann::json::array();
  for (const auto& add : files) files_json.push_back(delta::ToJsonLine(add));
  nlohmann::json doc = {
      {"files", files_json},
      {"schema", schema},
      {"stats",
       {{"rows", stats.rows},
        {"deletes", stats.deletes},
        {"inserts", stats.inserts},
        {"updates", stats.updates},
        {"min_lsn", TextOrNull(stats.min_lsn)},
        {"max_lsn", TextOrNull(stats.max_lsn)},
        {"min_commit_ts_us", MicrosOrNull(stats.min_commit_ts)},
        {"max_commit_ts_us", MicrosOrNull(stats.max_commit_ts)}}},
      {"measures", nlohmann::json::parse(RangeMeasuresToJson(measures))}};
  return doc.dump();
}

BronzeRangeFiles BronzeRangeFiles::FromJson(const std::string& text, const std::string& what) {
  BronzeRangeFiles out;
  try {
    const auto doc = nlohmann::json::parse(text);
    for (const auto& line : doc.at("files")) {
      auto action = delta::ParseJsonLine(line.get<std::string>(), what);
      if (!action || !std::holds_alternative<delta::AddFile>(*action)) {
        throw ConfigError(what + " names a file without an add action");
      }
      out.files.push_back(std::get<delta::AddFile>(std::move(*action)));
    }
    out.schema = doc.at("schema").get<std::string>();
    const auto& stats = doc.at("stats");
    out.stats.rows = stats.at("rows").get<std::int64_t>();
    out.stats.deletes = stats.at("deletes").get<std::int64_t>();
    out.stats.inserts = stats.at("inserts").get<std::int64_t>();
    out.stats.updates = stats.at("updates").get<std::int64_t>();
    out.stats.min_lsn = OptionalText(stats.at("min_lsn"));
    out.stats.max_lsn = OptionalText(stats.at("max_lsn"));
    out.stats.min_commit_ts = OptionalMicros(stats.at("min_commit_ts_us"));
    out.stats.max_commit_ts = OptionalMicros(stats.at("max_commit_ts_us"));
    out.measures = RangeMeasuresFromJson(doc.at("measures").dump(), what);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(what + " is not a range's bronze files: " + e.what());
  }
  return out;
}

BronzeRangeFiles WriteRangeToBronze(const SourceOptions& options, const Lsn& from, const Lsn& to,
                                    bool measure_end, const FeedRangeShape& shape,
                                    const BronzeRangeRequest& request) {
  const std::unique_ptr<FeedRangeReader> reader =
      ReadFeedRange(options, from, to, measure_end, nullptr, shape);
  delta::DeltaTable bronze = delta::DeltaTable::Open(request.bronze_uri);
  const delta::DeltaTable::Staged staged = bronze.StageAppend(BronzeSchema(reader->schema()));
  std::unique_ptr<delta::DataFileStream> stream = staged.NewFileStream(request.part);
  BronzeRangeFiles out;
  out.schema = delta::ToDeltaSchemaString(*staged.schema());
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader->ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    auto aligned = AlignToBronze(batch, staged.schema(), request.batch_id, std::nullopt);
    out.stats.Add(StatsOf(*aligned));
    stream->Write(aligned);
  }
  out.files = stream->Finish();
  out.measures = reader->measures();
  return out;
}

RowStats SumRowStats(const std::vector<BronzeRangeFiles>& ranges) {
  RowStats sum;
  for (const auto& range : ranges) sum.Add(range.stats);
  return sum;
}

delta::CommitResult CommitBronzeRanges(const std::string& bronze_uri,
                                       const std::vector<BronzeRangeFiles>& ranges,
                                       const delta::Txn& txn, const std::string& user_metadata) {
  delta::DeltaTable bronze = delta::DeltaTable::Open(bronze_uri);
  std::vector<delta::AddFile> files;
  std::vector<std::string> paths;
  for (const auto& range : ranges) {
    for (const auto& add : range.files) {
      files.push_back(add);
      paths.push_back(add.path);
    }
  }
  if (ranges.empty()) throw InternalError("a bronze commit of no range");
  delta::AppendOptions append;
  append.txn = txn;
  append.user_metadata = user_metadata;
  const delta::DeltaTable::Staged staged =
      bronze.StageAppend(delta::FromDeltaSchemaString(ranges.front().schema, "a range's schema"),
                         append);
  const std::string schema = delta::ToDeltaSchemaString(*staged.schema());
  for (const auto& range : ranges) {
    if (range.schema != schema) {
      bronze.DeleteUnnamedFiles(paths);
      throw ConcurrentModificationError(
          "bronze " + bronze_uri + " changed its schema while batch " + std::to_string(txn.version) +
          " was read; the batch is read again");
    }
  }
  return bronze.CommitStaged(staged, files);
}

}  // namespace mssql_cdc
