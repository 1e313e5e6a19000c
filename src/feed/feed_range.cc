#include "feed/feed_range.h"

#include <arrow/type.h>
#include <arrow/util/byte_size.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "core/errors.h"
#include "core/timezone.h"
#include "engine/batch_reader.h"
#include "feed/change_feed.h"
#include "engine/retention_guard.h"
#include "schema_change/batch_schema.h"
#include "source/column_selection.h"
#include "core/arrow_status.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

class MeasuredRangeReader final : public FeedRangeReader {
 public:
  MeasuredRangeReader(std::unique_ptr<Source> source, std::string capture_instance,
                      SourceClock clock, std::shared_ptr<arrow::Schema> schema,
                      std::unique_ptr<arrow::RecordBatchReader> changes, bool fail_on_data_loss,
                      RangeMeasures measures, std::shared_ptr<ReadWaits> waits,
                      bool measure_end, std::chrono::steady_clock::time_point started)
      : source_(std::move(source)),
        capture_instance_(std::move(capture_instance)),
        clock_(std::move(clock)),
        schema_(std::move(schema)),
        changes_(std::move(changes)),
        fail_on_data_loss_(fail_on_data_loss),
        measures_(std::move(measures)),
        waits_(std::move(waits)),
        measure_end_(measure_end),
        started_(started) {}

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  const RangeMeasures& measures() const override { return measures_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    return ReadNextOrStatus(batch, [this] { return Next(); }, [this] { Release(); });
  }

  arrow::Status Close() override {
    Release();
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatch> Next() {
    while (changes_) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ThrowIfError(changes_->ReadNext(&batch));
      if (!batch) {
        changes_.reset();
        measures_.read_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        measures_.network_wait_ms = waits_->network_wait_ms;
        measures_.reader = waits_->reader;
        const Retention after = CheckRetentionAfterRead();
        if (measure_end_) measures_.end = MeasureEnd(*source_, clock_, after);
        break;
      }
      if (batch->num_rows() == 0) continue;
      measures_.rows += batch->num_rows();
      measures_.bytes += arrow::util::TotalBufferSize(*batch);
      // The schema Spark was told, field for field, whatever the backend's batches carry.
      return AlignToBronze(batch, schema_, std::nullopt, std::nullopt);
    }
    return nullptr;
  }

  Retention CheckRetentionAfterRead() {
    const Lsn& from = measures_.from;
    const Retention after = ReadRetention(*source_, clock_, capture_instance_);
    if (!Purged(after, from) || !fail_on_data_loss_) return after;
    Offset last_processed{from.Decrement(), std::nullopt};
    if (auto local = source_->CommitTimeAtOrBefore(last_processed.lsn)) {
      last_processed.commit_ts = clock_.ToUtc(*local);
    }
    ThrowDataLoss(capture_instance_, last_processed, after, std::nullopt, /*during_read=*/true);
  }

  void Release() { changes_.reset(); }

  std::unique_ptr<Source> source_;
  std::string capture_instance_;
  SourceClock clock_;
  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<arrow::RecordBatchReader> changes_;  // null once read to the end or failed
  bool fail_on_data_loss_;
  RangeMeasures measures_;
  std::shared_ptr<ReadWaits> waits_;  // what the source's reader waited, as it reads
  bool measure_end_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace

std::unique_ptr<FeedRangeReader> ReadFeedRange(const SourceOptions& options, const Lsn& from,
                                               const Lsn& to, bool measure_end,
                                               SourceFactory factory, const FeedRangeShape& shape) {
  ChangeFeed::CheckOptions(options);
  if (!factory) factory = MakeSourceFactory(options);
  std::unique_ptr<Source> source = factory();
  const CaptureInstanceInfo instance = source->ResolveCaptureInstance(
      shape.capture_instance.empty() ? options.capture_instance : shape.capture_instance);
  SourceClock clock = ResolveSourceClock(*source, options.source_time_zone);
  auto schema = shape.schema;
  if (!schema) {
    schema = OutputSchema(
        ResolveStreamColumns(*source, TableInstances::Of(*source, instance), options.columns).fields,
        options.include_command_id);
  }
  // Only the columns the query reads that this instance captures; the others read NULL.
  std::vector<std::string> wanted;
  for (const auto& field : schema->fields()) {
    if (!IsReservedColumnName(field->name())) wanted.push_back(field->name());
  }
  ChangeReadRequest request;
  request.capture_instance = instance.name;
  request.from = from;
  request.to = to;
  request.columns = NamesCaptured(source->CapturedColumns(instance.name), wanted);
  request.include_command_id = options.include_command_id;
  request.batch_rows = options.arrow_batch_size;
  request.waits = std::make_shared<ReadWaits>();
  RangeMeasures measures;
  measures.from = from;
  measures.to = to;
  measures.round_trip_ms = source->RoundTripMs();
  const auto started = std::chrono::steady_clock::now();
  auto changes = source->ReadChanges(request, clock);
  return std::make_unique<MeasuredRangeReader>(
      std::move(source), instance.name, std::move(clock), std::move(schema), std::move(changes),
      options.fail_on_data_loss, std::move(measures), request.waits, measure_end, started);
}

}  // namespace mssql_cdc
