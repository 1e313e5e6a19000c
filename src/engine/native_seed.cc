#include "engine/native_seed.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <parquet/arrow/reader.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "storage/file_system.h"
#include "storage/store.h"
#include "delta/grouped_appender.h"
#include "delta/parquet_file_reader.h"
#include "delta/table.h"
#include "engine/batch_reader.h"
#include "engine/bootstrap.h"
#include "engine/facts.h"
#include "engine/table_schemas.h"
#include "snapshot/snapshot_finder.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

// The copy: its columns, and its rows a row group at a time.
class SeedCopy {
 public:
  virtual ~SeedCopy() = default;
  virtual std::vector<std::string> columns() const = 0;
  virtual void ForEachBatch(const std::function<void(const arrow::RecordBatch&)>& visit) = 0;
};

class DeltaCopy final : public SeedCopy {
 public:
  explicit DeltaCopy(const std::string& path) {
    if (!delta::DeltaTable::Exists(path)) {
      throw ConfigError("seed: " + path + " is not a Delta table (it has no _delta_log); give "
                        "the copy's table directory, or --from-parquet for Parquet files");
    }
    table_.emplace(delta::DeltaTable::Open(path));
  }
  std::vector<std::string> columns() const override { return table_->state().schema()->field_names(); }
  void ForEachBatch(const std::function<void(const arrow::RecordBatch&)>& visit) override {
    std::vector<delta::AddFile> files;
    for (const auto& [path, add] : table_->state().files) files.push_back(add);
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    table_->ScanFiles(files, columns(), visit);
  }

 private:
  std::optional<delta::DeltaTable> table_;
};

class ParquetCopy final : public SeedCopy {
 public:
  explicit ParquetCopy(const std::string& path) : fs_(storage::LocalFileSystem()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".parquet") {
          files_.push_back(entry.path().string());
        }
      }
      std::sort(files_.begin(), files_.end());
    } else if (std::filesystem::is_regular_file(path, ec)) {
      files_.push_back(path);
    }
    if (files_.empty()) {
      throw ConfigError("seed: " + path + " is neither a Parquet file nor a directory holding "
                        ".parquet files; give the copy's files, or --from-delta for a Delta table");
    }
    std::shared_ptr<arrow::Schema> schema;
    if (!delta::OpenDataFile(*fs_, files_[0], false)->GetSchema(&schema).ok()) {
      throw SourceError("seed: cannot read the schema of " + files_[0]);
    }
    columns_ = schema->field_names();
  }
  std::vector<std::string> columns() const override { return columns_; }
  void ForEachBatch(const std::function<void(const arrow::RecordBatch&)>& visit) override {
    for (const auto& file : files_) {
      auto reader = delta::OpenDataFile(*fs_, file, false);
      for (int group = 0; group < reader->num_row_groups(); ++group) {
        std::shared_ptr<arrow::Table> rows;
        const auto status = reader->ReadRowGroup(group, &rows);
        if (!status.ok()) throw SourceError("seed: reading " + file + ": " + status.ToString());
        arrow::TableBatchReader batches(*rows);
        std::shared_ptr<arrow::RecordBatch> batch;
        while (batches.ReadNext(&batch).ok() && batch) visit(*batch);
      }
    }
  }

 private:
  std::shared_ptr<storage::FileSystem> fs_;
  std::vector<std::string> files_;
  std::vector<std::string> columns_;
};

// A copy's batch as operation-0 rows of the output schema stamped `offset`, then bronze's.
std::shared_ptr<arrow::RecordBatch> SeedRows(const arrow::RecordBatch& copy,
                                             const std::shared_ptr<arrow::Schema>& output,
                                             const std::vector<CapturedColumn>& captured,
                                             const SeedColumns& matched,
                                             const std::string& capture_instance,
                                             const Offset& offset,
                                             const std::shared_ptr<arrow::Schema>& bronze) {
  const std::int64_t n = copy.num_rows();
  const auto metadata = SeedMetadata(capture_instance, offset);
  arrow::ArrayVector columns;
  // The output schema's metadata columns come first, then the captured ones.
  const int metadata_columns = output->num_fields() - static_cast<int>(captured.size());
  for (int i = 0; i < metadata_columns; ++i) {
    const auto& field = output->field(i);
    const auto value = metadata.find(field->name());
    if (value == metadata.end()) {
      columns.push_back(*arrow::MakeArrayOfNull(field->type(), n));
      continue;
    }
    const auto scalar = std::visit(
        [&](const auto& v) -> std::shared_ptr<arrow::Scalar> {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, UtcMicros>) {
            return std::make_shared<arrow::TimestampScalar>(v.value, field->type());
          } else {
            return arrow::MakeScalar(v);
          }
        },
        value->second);
    columns.push_back(*arrow::MakeArrayFromScalar(*scalar, n));
  }
  for (std::size_t i = 0; i < captured.size(); ++i) {
    const auto& field = output->field(static_cast<int>(columns.size()));
    if (!matched.from[i]) {
      columns.push_back(*arrow::MakeArrayOfNull(field->type(), n));
      continue;
    }
    auto column = copy.GetColumnByName(*matched.from[i]);
    if (!column->type()->Equals(*field->type())) {
      delta::EnsureComputeKernels();
      auto cast = arrow::compute::Cast(*column, field->type());
      if (!cast.ok()) {
        throw ConfigError("seed: the copy's column '" + *matched.from[i] + "' (" +
                          column->type()->ToString() + ") cannot become the stream's " +
                          field->type()->ToString() + " (" + captured[i].type.ToString() +
                          "): " + cast.status().message());
      }
      column = *cast;
    }
    columns.push_back(std::move(column));
  }
  auto rows = arrow::RecordBatch::Make(output, n, std::move(columns));
  return AlignToBronze(rows, bronze, std::nullopt, std::get<std::string>(metadata.at(std::string(kSnapshotColumn))));
}

}  // namespace

NativeSeedResult SeedNatively(const NativeSeedRequest& request, SourceFactory factory) {
  const UtcMicros started_at = NowUtc();
  const auto started = std::chrono::steady_clock::now();
  const StreamParams& params = request.stream.params;
  const SourceOptions& options = request.stream.source;
  if (!factory) factory = MakeSourceFactory(options);
  std::unique_ptr<Source> source = factory();
  const CaptureInstanceInfo instance = source->ResolveCaptureInstance(options.capture_instance);
  const SourceClock clock = ResolveSourceClock(*source, options.source_time_zone);
  const std::vector<CapturedColumn> captured = source->CapturedColumns(instance.name);
  const auto output = OutputSchema(captured, options.include_command_id);

  // Every check before the first write.
  std::unique_ptr<SeedCopy> copy;
  if (request.format == SeedCopyFormat::kDelta) {
    copy = std::make_unique<DeltaCopy>(request.copy);
  } else {
    copy = std::make_unique<ParquetCopy>(request.copy);
  }
  const SeedColumns matched =
      MatchSeedColumns(captured, options.snapshot_keys.value_or(instance.index_columns),
                       copy->columns(), request.allow_missing_columns);
  const Offset offset = ResolveSeedPoint(*source, clock, instance, request.as_of);
  CheckExistingTable(params.target, TableKind::kBronze);
  if (params.facts_table) CheckExistingTable(*params.facts_table, TableKind::kFacts);
  std::optional<FoundSnapshot> found;
  if (delta::DeltaTable::Exists(params.target)) {
    found = FindSnapshot(delta::DeltaTable::Open(params.target),
                         InstancesOfTable(source->ListCaptureInstances(), instance));
  }
  const SeedAction action = DecideSeed(found, offset.lsn, request.reseed);

  delta::DeltaTable bronze = OpenOrCreateTable(params.target, BronzeTableOptions(output, instance.name));
  NativeSeedResult result;
  result.offset = offset;
  if (action == SeedAction::kWrite) {
    const auto bronze_schema = BronzeSchema(output);
    delta::AppendOptions append;
    append.user_metadata = SeedCommitMetadata(options.capture_instance, offset);
    const auto staged = bronze.StageAppend(bronze_schema, append);
    auto stream = staged.NewFileStream(0);
    copy->ForEachBatch([&](const arrow::RecordBatch& batch) {
      if (batch.num_rows() == 0) return;
      stream->Write(SeedRows(batch, output, captured, matched, options.capture_instance, offset,
                             bronze_schema));
      result.rows += batch.num_rows();
    });
    result.written = bronze.CommitStaged(staged, stream->Finish()).written;
    spdlog::info("seed of capture instance '{}': {} rows into {} as of LSN {}", instance.name,
                 result.rows, params.target, offset.lsn.ToString());
  } else {
    spdlog::info("seed of capture instance '{}': {} holds this seed already (LSN {})",
                 instance.name, params.target, offset.lsn.ToString());
  }
  if (params.facts_table) {
    DeltaBootstrapTables tables(bronze, nullptr);
    if (!result.written) result.rows = tables.SnapshotRows(offset.lsn);
    delta::GroupedAppender facts(OpenOrCreateTable(*params.facts_table, FactsTableOptions()));
    FactsRow row = BootstrapFactsRow(params.app_id, params.target, offset, result.rows, started_at,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - started)
                                         .count());
    facts.Append({FactsToRecordBatch({row})}, delta::Txn{EventsTxnAppId(params.app_id), 0, std::nullopt});
  }
  return result;
}

}  // namespace mssql_cdc
