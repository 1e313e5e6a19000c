#include "silver/silver_merge.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <unordered_map>

#include "core/ascii.h"
#include "core/errors.h"
#include "delta/column_mapping.h"
#include "delta/file_stats.h"
#include "delta/row_filter.h"
#include "delta/schema.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

void Check(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) throw InternalError(what + ": " + status.ToString());
}

template <typename T>
T Value(arrow::Result<T> result, const std::string& what) {
  Check(result.status(), what);
  return std::move(result).ValueOrDie();
}

std::shared_ptr<arrow::Field> FieldNamed(const arrow::Schema& schema, const std::string& name) {
  for (const auto& field : schema.fields()) {
    if (EqualsIgnoringAsciiCase(field->name(), name)) return field;
  }
  throw InternalError("silver lacks column " + name);
}

// Whether the file may hold one of the image keys, judged on the first key column's stats:
// conservative, a file without usable stats is always read.
class TouchedFiles {
 public:
  TouchedFiles(const arrow::Schema& silver, const std::string& first_key, const arrow::Table& images)
      : field_(FieldNamed(silver, first_key)), stats_name_(delta::PhysicalName(*field_)) {
    auto column = images.GetColumnByName(field_->name());
    keys_ = Value(arrow::Concatenate(column->chunks()), "combining image keys");
    has_null_key_ = keys_->null_count() > 0;
  }

  bool MayHold(const delta::AddFile& file) const {
    if (!file.stats) return true;
    const auto stats = delta::ParseFileStats(*file.stats);
    if (!stats || !stats->num_records) return true;
    const auto bounds = delta::BoundsOf(*stats, stats_name_, field_->type());
    if (!bounds.null_count) return true;
    if (has_null_key_ && *bounds.null_count > 0) return true;
    if (*bounds.null_count == *stats->num_records) return false;  // only NULL keys
    if (!bounds.min || !bounds.max) return true;
    auto above = Value(arrow::compute::CallFunction("greater_equal", {keys_, bounds.min}), "matching keys");
    auto below = Value(arrow::compute::CallFunction("less_equal", {keys_, bounds.max}), "matching keys");
    auto within = Value(arrow::compute::CallFunction("and", {above, below}), "matching keys");
    auto any = Value(arrow::compute::CallFunction("any", {within}), "matching keys");
    const auto& scalar = static_cast<const arrow::BooleanScalar&>(*any.scalar());
    return scalar.is_valid && scalar.value;
  }

 private:
  std::shared_ptr<arrow::Field> field_;
  std::string stats_name_;
  std::shared_ptr<arrow::Array> keys_;
  bool has_null_key_ = false;
};

// `rows` ordered by the key columns (NULLs last).
std::shared_ptr<arrow::RecordBatch> OrderedByKeys(const std::shared_ptr<arrow::Table>& rows,
                                                  const std::vector<std::string>& keys) {
  std::vector<arrow::compute::SortKey> sort_keys;
  for (const auto& key : keys) sort_keys.emplace_back(FieldNamed(*rows->schema(), key)->name());
  arrow::compute::SortOptions options(sort_keys, arrow::compute::NullPlacement::AtEnd);
  auto indices = Value(arrow::compute::SortIndices(arrow::Datum(rows), options), "ordering silver rows");
  auto taken = Value(arrow::compute::Take(rows, indices), "ordering silver rows");
  return Value(taken.table()->CombineChunksToBatch(), "ordering silver rows");
}

std::shared_ptr<arrow::Table> Filtered(const std::shared_ptr<arrow::Table>& rows,
                                       const std::vector<bool>& keep) {
  arrow::BooleanBuilder mask;
  Check(mask.Reserve(static_cast<std::int64_t>(keep.size())), "selecting rows");
  for (bool k : keep) mask.UnsafeAppend(k);
  std::shared_ptr<arrow::Array> array;
  Check(mask.Finish(&array), "selecting rows");
  return Value(arrow::compute::Filter(rows, array), "selecting rows").table();
}

std::vector<std::string_view> LsnViews(const arrow::Table& rows) {
  std::vector<std::string_view> views;
  views.reserve(static_cast<std::size_t>(rows.num_rows()));
  auto column = rows.GetColumnByName(std::string(kStartLsnColumn));
  for (const auto& chunk : column->chunks()) {
    const auto& strings = static_cast<const arrow::StringArray&>(*chunk);
    for (std::int64_t i = 0; i < strings.length(); ++i) {
      views.push_back(strings.IsValid(i) ? strings.GetView(i) : std::string_view());
    }
  }
  return views;
}

}  // namespace

SilverMergeResult MergeIntoSilver(delta::DeltaTable& silver, const LatestImages& images,
                                  const std::vector<std::string>& keys, bool rebuild) {
  SilverMergeResult result;
  delta::AppendOptions options;
  options.operation = "MERGE";
  auto plan = [&](const delta::Snapshot& snapshot, const std::shared_ptr<arrow::Schema>& schema) {
    result = SilverMergeResult{};
    delta::DeltaTable::Rewrite rewrite;
    rewrite.predicate = rebuild ? "rebuild from a snapshot" : "key matches a changed key";
    const auto image_rows = delta::AlignBatchToSchema(
        *Value(images.rows->CombineChunksToBatch(), "combining images"), schema, silver.uri());
    const auto image_table = Value(arrow::Table::FromRecordBatches({image_rows}), "combining images");
    const auto image_lsns = LsnViews(*image_table);
    std::vector<bool> take(images.deletes.size());
    for (std::size_t i = 0; i < take.size(); ++i) take[i] = !images.deletes[i];

    std::vector<std::shared_ptr<arrow::Table>> parts;
    if (rebuild) {
      for (const auto& [path, add] : snapshot.files) rewrite.remove.push_back(add);
    } else if (!images.keys.empty()) {
      TouchedFiles touched(*schema, keys.front(), *image_table);
      for (const auto& [path, add] : snapshot.files) {
        if (touched.MayHold(add)) rewrite.remove.push_back(add);
      }
      std::unordered_map<std::string_view, std::size_t> image_of;
      image_of.reserve(images.keys.size());
      for (std::size_t i = 0; i < images.keys.size(); ++i) image_of.emplace(images.keys[i], i);
      const auto current = silver.ReadFiles(rewrite.remove, schema);
      const auto current_keys = EncodeKeys(*current, keys);
      const auto current_lsns = LsnViews(*current);
      std::vector<bool> keep(current_keys.size(), true);
      bool changed = false;
      for (std::size_t row = 0; row < current_keys.size(); ++row) {
        auto found = image_of.find(current_keys[row]);
        if (found == image_of.end()) continue;
        const std::size_t image = found->second;
        if (current_lsns[row] >= image_lsns[image]) {
          take[image] = false;  // silver's row is as new or newer: the image is old news
          ++result.unchanged;
        } else {
          keep[row] = false;
          changed = true;
          if (images.deletes[image]) ++result.deleted;
        }
      }
      if (changed) {
        parts.push_back(Filtered(current, keep));
        result.files_read = static_cast<std::int64_t>(rewrite.remove.size());
      } else {
        rewrite.remove.clear();  // nothing of those files changes: they stay
      }
    }
    for (std::size_t i = 0; i < take.size(); ++i) result.upserted += take[i] ? 1 : 0;
    if (rebuild) result.deleted = static_cast<std::int64_t>(images.deletes.size()) - result.upserted;
    if (result.upserted > 0) parts.push_back(Filtered(image_table, take));
    if (rewrite.remove.empty() && result.upserted == 0) {
      rewrite.commit = rebuild && !snapshot.files.empty();
      return rewrite;
    }
    if (!parts.empty()) {
      auto combined = Value(arrow::ConcatenateTables(parts), "combining silver rows");
      if (combined->num_rows() > 0) rewrite.rows.push_back(OrderedByKeys(combined, keys));
    }
    return rewrite;
  };
  result.commit = silver.RewriteFiles(images.rows->schema(), plan, options);
  return result;
}

}  // namespace mssql_cdc
