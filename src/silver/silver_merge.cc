#include "silver/silver_merge.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/ascii.h"
#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/data_file_stream.h"
#include "delta/column_mapping.h"
#include "delta/file_stats.h"
#include "delta/row_filter.h"
#include "delta/schema.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

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
    keys_ = ValueOrInternal(arrow::Concatenate(column->chunks()), "combining image keys");
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
    auto above = ValueOrInternal(arrow::compute::CallFunction("greater_equal", {keys_, bounds.min}), "matching keys");
    auto below = ValueOrInternal(arrow::compute::CallFunction("less_equal", {keys_, bounds.max}), "matching keys");
    auto within = ValueOrInternal(arrow::compute::CallFunction("and", {above, below}), "matching keys");
    auto any = ValueOrInternal(arrow::compute::CallFunction("any", {within}), "matching keys");
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
  auto indices = ValueOrInternal(arrow::compute::SortIndices(arrow::Datum(rows), options), "ordering silver rows");
  auto taken = ValueOrInternal(arrow::compute::Take(rows, indices), "ordering silver rows");
  return ValueOrInternal(taken.table()->CombineChunksToBatch(), "ordering silver rows");
}

std::shared_ptr<arrow::Table> Filtered(const std::shared_ptr<arrow::Table>& rows,
                                       const std::vector<bool>& keep) {
  arrow::BooleanBuilder mask;
  CheckInternal(mask.Reserve(static_cast<std::int64_t>(keep.size())), "selecting rows");
  for (bool k : keep) mask.UnsafeAppend(k);
  std::shared_ptr<arrow::Array> array;
  CheckInternal(mask.Finish(&array), "selecting rows");
  return ValueOrInternal(arrow::compute::Filter(rows, array), "selecting rows").table();
}

// The images' keys, to find the image of each row of a silver file: one integer map for a
// single integer key column (the common case, and no text per row), encoded keys otherwise.
class ImageKeys {
 public:
  ImageKeys(const arrow::Table& images, const std::vector<std::string>& keys) : keys_(keys) {
    integer_ = IsSingleIntegerKey(*images.schema(), keys);
    if (integer_) {
      const auto values = IntegerKeyValues(images, keys.front());
      by_integer_.reserve(static_cast<std::size_t>(values->length()));
      for (std::int64_t i = 0; i < values->length(); ++i) {
        if (values->IsNull(i)) {
          null_image_ = i;
        } else {
          by_integer_.emplace(values->Value(i), i);
        }
      }
      return;
    }
    encoded_ = EncodeKeys(images, keys);
    by_bytes_.reserve(encoded_.size());
    for (std::size_t i = 0; i < encoded_.size(); ++i) by_bytes_.emplace(encoded_[i], static_cast<std::int64_t>(i));
  }

  // Per row of `rows`: the index of its key's image, or -1.
  std::vector<std::int64_t> Match(const arrow::Table& rows) const {
    std::vector<std::int64_t> found(static_cast<std::size_t>(rows.num_rows()), -1);
    if (integer_) {
      const auto values = IntegerKeyValues(rows, keys_.front());
      for (std::int64_t i = 0; i < values->length(); ++i) {
        if (values->IsNull(i)) {
          found[static_cast<std::size_t>(i)] = null_image_.value_or(-1);
        } else if (auto it = by_integer_.find(values->Value(i)); it != by_integer_.end()) {
          found[static_cast<std::size_t>(i)] = it->second;
        }
      }
      return found;
    }
    const auto encoded = EncodeKeys(rows, keys_);
    for (std::size_t i = 0; i < encoded.size(); ++i) {
      if (auto it = by_bytes_.find(encoded[i]); it != by_bytes_.end()) found[i] = it->second;
    }
    return found;
  }

 private:
  std::vector<std::string> keys_;
  bool integer_ = false;
  std::unordered_map<std::int64_t, std::int64_t> by_integer_;
  std::optional<std::int64_t> null_image_;
  std::vector<std::string> encoded_;
  std::unordered_map<std::string_view, std::int64_t> by_bytes_;
};

// Calls work(0..count-1) on up to as many threads as the machine has cores; rethrows the
// first error once every thread is done.
void RunOnThreads(std::size_t count, const std::function<void(std::size_t)>& work) {
  const std::size_t threads = std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < count;) {
        try {
          work(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  }
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
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
                                  const std::vector<std::string>& keys) {
  delta::EnsureComputeKernels();
  SilverMergeResult result;
  delta::AppendOptions options;
  options.operation = "MERGE";
  auto plan = [&](const delta::TableState& snapshot, const std::shared_ptr<arrow::Schema>& schema) {
    result = SilverMergeResult{};
    delta::DeltaTable::Rewrite rewrite;
    rewrite.predicate = "key matches a changed key";
    const auto image_rows = delta::AlignBatchToSchema(
        *ValueOrInternal(images.rows->CombineChunksToBatch(), "combining images"), schema, silver.uri());
    const auto image_table = ValueOrInternal(arrow::Table::FromRecordBatches({image_rows}), "combining images");
    const auto image_lsns = LsnViews(*image_table);
    std::vector<bool> take(images.deletes.size());
    for (std::size_t i = 0; i < take.size(); ++i) take[i] = !images.deletes[i];

    std::vector<std::shared_ptr<arrow::Table>> parts;
    if (image_table->num_rows() > 0) {
      // File by file: each touched file's rows that stay, with the images of its keys that
      // replace rows, are written as a part of their own, so that files keep their key ranges.
      TouchedFiles touched(*schema, keys.front(), *image_table);
      std::vector<delta::AddFile> candidates;
      for (const auto& [path, add] : snapshot.files) {
        if (touched.MayHold(add)) candidates.push_back(add);
      }
      const ImageKeys image_keys(*image_table, keys);
      // Files are read, matched and cut on a few threads at once; a key is in one file only,
      // so each image is decided by the one file that holds its key.
      std::vector<char> met(take.size(), 0);
      struct FileOutcome {
        bool changed = false;
        std::int64_t unchanged = 0, deleted = 0, upserted = 0;
        std::shared_ptr<arrow::RecordBatch> rows;
      };
      std::vector<FileOutcome> outcomes(candidates.size());
      auto rewrite_file = [&](std::size_t f) {
        FileOutcome& out = outcomes[f];
        const auto current = silver.ReadFiles({candidates[f]}, schema);
        const auto matched = image_keys.Match(*current);
        const auto current_lsns = LsnViews(*current);
        std::vector<bool> keep(matched.size(), true);
        std::vector<bool> replaced_here(take.size(), false);
        for (std::size_t row = 0; row < matched.size(); ++row) {
          if (matched[row] < 0) continue;
          const auto image = static_cast<std::size_t>(matched[row]);
          met[image] = 1;
          if (current_lsns[row] >= image_lsns[image]) {
            ++out.unchanged;  // silver's row is as new or newer: the image is old news
            continue;
          }
          keep[row] = false;
          out.changed = true;
          if (images.deletes[image]) {
            ++out.deleted;
          } else {
            replaced_here[image] = true;
            ++out.upserted;
          }
        }
        if (!out.changed) return;  // nothing of this file changes: it stays
        std::vector<std::shared_ptr<arrow::Table>> file_parts = {Filtered(current, keep),
                                                                 Filtered(image_table, replaced_here)};
        auto combined = ValueOrInternal(arrow::ConcatenateTables(file_parts), "combining silver rows");
        out.rows = ValueOrInternal(combined->CombineChunksToBatch(), "combining silver rows");
      };
      RunOnThreads(candidates.size(), rewrite_file);
      for (std::size_t f = 0; f < candidates.size(); ++f) {
        const FileOutcome& out = outcomes[f];
        result.unchanged += out.unchanged;
        result.deleted += out.deleted;
        result.upserted += out.upserted;
        if (!out.changed) continue;
        rewrite.remove.push_back(candidates[f]);
        ++result.files_read;
        rewrite.parts.push_back({out.rows});
      }
      for (std::size_t i = 0; i < take.size(); ++i) {
        if (met[i]) take[i] = false;  // decided with the row it met
      }
    }
    // Images no row of silver met: new keys (deletes of absent keys change nothing).
    std::int64_t inserted = 0;
    for (std::size_t i = 0; i < take.size(); ++i) inserted += take[i] ? 1 : 0;
    result.upserted += inserted;
    if (inserted > 0) parts.push_back(Filtered(image_table, take));
    if (rewrite.remove.empty() && inserted == 0) {
      rewrite.commit = false;
      return rewrite;
    }
    if (!parts.empty()) {
      auto combined = ValueOrInternal(arrow::ConcatenateTables(parts), "combining silver rows");
      if (combined->num_rows() > 0) rewrite.rows.push_back(OrderedByKeys(combined, keys));
    }
    return rewrite;
  };
  result.commit = silver.RewriteFiles(images.rows->schema(), plan, options);
  return result;
}

SilverMergeResult RebuildSilver(delta::DeltaTable& silver, SpilledRebuild& rebuild,
                                const std::shared_ptr<arrow::Schema>& schema, std::int64_t memory_budget) {
  SilverMergeResult result;
  delta::AppendOptions options;
  options.operation = "MERGE";
  options.write.row_group_bytes = std::max<std::int64_t>(1 << 20, memory_budget / 4);
  auto plan = [&](const delta::TableState& snapshot, const std::shared_ptr<arrow::Schema>&) {
    result = SilverMergeResult{};
    delta::DeltaTable::Rewrite rewrite;
    rewrite.predicate = "rebuild from a snapshot";
    for (const auto& [path, add] : snapshot.files) rewrite.remove.push_back(add);
    if (rewrite.remove.empty() && rebuild.rows_added() == 0) {
      rewrite.commit = false;
      return rewrite;
    }
    rewrite.stream_rows = [&](delta::DataFileStream& out) {
      const RebuildCounts counts = rebuild.WriteTo(out);
      result.upserted = counts.upserted;
      result.deleted = counts.deleted;
    };
    return rewrite;
  };
  result.commit = silver.RewriteFiles(schema, plan, options);
  return result;
}

}  // namespace mssql_cdc
