#include "silver/range_deletes.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <unordered_set>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/column_mapping.h"
#include "delta/compute_kernels.h"
#include "delta/file_stats.h"
#include "delta/row_filter.h"
#include "delta/table_cells.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

std::optional<std::int64_t> UnitsOf(const std::shared_ptr<arrow::Scalar>& scalar) {
  if (!scalar || !scalar->is_valid) return std::nullopt;
  const auto array = ValueOrInternal(arrow::MakeArrayFromScalar(*scalar, 1), "reading file statistics");
  return KeyUnitValues(*array)->Value(0);
}

// Whether a silver file may hold a key inside a range, judged on the key's statistics; a file
// without usable ones is read.
bool MayHoldRangeKeys(const delta::AddFile& file, const arrow::Field& key, const WaveRanges& ranges) {
  if (!file.stats) return true;
  const auto stats = delta::ParseFileStats(*file.stats);
  if (!stats) return true;
  const auto bounds = delta::BoundsOf(*stats, delta::PhysicalName(key), key.type());
  if (bounds.null_count && stats->num_records && *bounds.null_count == *stats->num_records) return false;
  const auto min = UnitsOf(bounds.min), max = UnitsOf(bounds.max);
  if (!min || !max) return true;
  // Timestamp statistics are kept to the millisecond, the maximum truncated.
  const std::int64_t slack = ranges.unit == KeyUnit::kMicros ? 999 : 0;
  return ranges.Meets(*min, *max + slack);
}

// The keys (in the key's units) of the chunk rows among `plan_rows`.
std::unordered_set<std::int64_t> ChunkKeys(const arrow::Table& plan_rows, const WaveRanges& ranges) {
  std::unordered_set<std::int64_t> keys;
  if (plan_rows.num_rows() == 0) return keys;
  const auto values = KeyUnitValues(*delta::WholeColumn(*plan_rows.GetColumnByName(ranges.key)));
  const auto operation = delta::WholeColumn(*plan_rows.GetColumnByName(std::string(kOperationColumn)));
  const auto snapshot = delta::WholeColumn(*plan_rows.GetColumnByName(std::string(kSnapshotColumn)));
  const auto chunk = delta::WholeColumn(*plan_rows.GetColumnByName(std::string(kChunkColumn)));
  const auto& ops = static_cast<const arrow::Int32Array&>(*operation);
  const auto& snapshots = static_cast<const arrow::StringArray&>(*snapshot);
  for (std::int64_t i = 0; i < values->length(); ++i) {
    if (values->IsNull(i) || ops.Value(i) != 0 || chunk->IsNull(i) || snapshots.IsNull(i) ||
        snapshots.GetView(i) != ranges.snapshot_lsn) {
      continue;
    }
    keys.insert(values->Value(i));
  }
  return keys;
}

}  // namespace

std::shared_ptr<arrow::Table> RangeDeleteRows(const delta::DeltaTable& silver, const WaveRanges& ranges,
                                              const arrow::Table& plan_rows) {
  delta::EnsureComputeKernels();
  const auto silver_schema = silver.state().schema();
  const auto key_field = silver_schema->GetFieldByName(ranges.key);
  if (!key_field) throw InternalError("range deletes: silver lacks key " + ranges.key);
  std::vector<delta::AddFile> files;
  for (const auto& [path, add] : silver.state().files) {
    if (MayHoldRangeKeys(add, *key_field, ranges)) files.push_back(add);
  }

  const auto held = ChunkKeys(plan_rows, ranges);
  arrow::ArrayVector keys;
  arrow::StringBuilder stamps;
  silver.ScanFiles(files, {ranges.key, std::string(kStartLsnColumn)}, [&](const arrow::RecordBatch& batch) {
    const auto values = KeyUnitValues(*batch.column(0));
    const auto& lsns = static_cast<const arrow::StringArray&>(*batch.column(1));
    arrow::Int64Builder take;
    for (std::int64_t i = 0; i < batch.num_rows(); ++i) {
      if (values->IsNull(i)) continue;
      const WaveRange* range = ranges.RangeOf(values->Value(i));
      if (!range || held.count(values->Value(i)) > 0) continue;
      if (!lsns.IsNull(i) && lsns.GetView(i) >= range->stamp) continue;  // changed at or after L
      CheckInternal(take.Append(i), "choosing keys");
      CheckInternal(stamps.Append(range->stamp), "choosing keys");
    }
    if (take.length() == 0) return;
    std::shared_ptr<arrow::Array> indices;
    CheckInternal(take.Finish(&indices), "choosing keys");
    keys.push_back(ValueOrInternal(arrow::compute::Take(*batch.column(0), *indices), "choosing keys"));
  });

  const auto schema = plan_rows.schema();
  const std::int64_t count = stamps.length();
  std::shared_ptr<arrow::Array> stamp_array;
  CheckInternal(stamps.Finish(&stamp_array), "writing stamps");
  arrow::ArrayVector columns;
  for (const auto& field : schema->fields()) {
    if (field->name() == ranges.key) {
      auto key = keys.empty() ? ValueOrInternal(arrow::MakeArrayOfNull(field->type(), 0), "keys")
                              : ValueOrInternal(arrow::Concatenate(keys), "combining keys");
      if (!key->type()->Equals(*field->type())) key = ValueOrInternal(arrow::compute::Cast(*key, field->type()), "keys");
      columns.push_back(key);
    } else if (field->name() == kOperationColumn) {
      const auto one = ValueOrInternal(arrow::MakeScalar(field->type(), 1), "operation");
      columns.push_back(ValueOrInternal(arrow::MakeArrayFromScalar(*one, count), "operation"));
    } else if (field->name() == kStartLsnColumn) {
      columns.push_back(stamp_array);
    } else {
      columns.push_back(ValueOrInternal(arrow::MakeArrayOfNull(field->type(), count), "columns"));
    }
  }
  return arrow::Table::Make(schema, columns, count);
}

}  // namespace mssql_cdc
