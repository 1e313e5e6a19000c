#include "silver/spilled_rebuild.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <queue>
#include <unordered_map>

#include "core/arrow_status.h"
#include "core/ascii.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/data_file_stream.h"
#include "delta/schema.h"
#include "silver/latest_images.h"
#include "silver/sortable_keys.h"
#include "silver/spill_runs.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

// Rows of merged output gathered before they are written as one batch.
constexpr std::int64_t kOutputRows = 64 * 1024;

bool HasField(const arrow::Schema& schema, std::string_view name) {
  for (const auto& field : schema.fields()) {
    if (EqualsIgnoringAsciiCase(field->name(), name)) return true;
  }
  return false;
}

// The bytes a batch's rows take, a slice counting only its own part of the buffers it shares.
std::int64_t BytesOf(const arrow::RecordBatch& batch) {
  auto referenced = arrow::util::ReferencedBufferSize(batch);
  return referenced.ok() ? *referenced : arrow::util::TotalBufferSize(batch);
}

// Rows `indices` of `batches` (positions counted across them in turn) as one batch. Stretches of
// consecutive rows, which rows that came in key order make, are copied whole; rows scattered
// more than that are taken one by one.
std::shared_ptr<arrow::RecordBatch> GatherRows(const std::shared_ptr<arrow::Schema>& schema,
                                               const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                               const std::vector<std::int64_t>& indices, const char* during) {
  std::vector<std::pair<std::int64_t, std::int64_t>> stretches;  // (first row, rows)
  for (const std::int64_t i : indices) {
    if (!stretches.empty() && stretches.back().first + stretches.back().second == i) {
      ++stretches.back().second;
    } else {
      stretches.emplace_back(i, 1);
    }
  }
  constexpr std::size_t kFewestRowsPerStretch = 16;
  if (stretches.size() * kFewestRowsPerStretch <= indices.size()) {
    std::vector<std::int64_t> starts{0};
    for (const auto& batch : batches) starts.push_back(starts.back() + batch->num_rows());
    arrow::RecordBatchVector slices;
    for (auto [first, rows] : stretches) {
      while (rows > 0) {
        const auto b = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), first) - starts.begin() - 1);
        const std::int64_t here = std::min(rows, starts[b + 1] - first);
        slices.push_back(batches[b]->Slice(first - starts[b], here));
        first += here;
        rows -= here;
      }
    }
    return ValueOrInternal(arrow::ConcatenateRecordBatches(slices), during);
  }
  const auto table = ValueOrInternal(arrow::Table::FromRecordBatches(schema, batches), during);
  arrow::Int64Builder builder;
  CheckInternal(builder.AppendValues(indices), during);
  const auto taken = ValueOrInternal(arrow::compute::Take(table, ValueOrInternal(builder.Finish(), during)), during);
  return ValueOrInternal(taken.table()->CombineChunksToBatch(), during);
}

// Stretches of rows already in key order that are worth merging rather than sorting afresh.
constexpr std::size_t kMostStretchesMerged = 1024;

// Orders `order` (0, 1, ... n-1) by `keys`. A snapshot arrives in key order (SQL Server reads
// it by the clustered key), each bronze file sorted though the files come in any order: rows
// in a few sorted stretches are merged stretch by stretch, not sorted again.
void SortByKey(const std::vector<std::string>& keys, std::vector<std::int64_t>& order) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 1; i < keys.size() && starts.size() <= kMostStretchesMerged; ++i) {
    if (keys[i] < keys[i - 1]) starts.push_back(i);
  }
  const auto less = [&](std::int64_t a, std::int64_t b) {
    return keys[static_cast<std::size_t>(a)] < keys[static_cast<std::size_t>(b)];
  };
  if (starts.size() > kMostStretchesMerged) {
    std::sort(order.begin(), order.end(), less);
    return;
  }
  const auto at = [&](std::size_t stretch) {
    return order.begin() + static_cast<std::ptrdiff_t>(stretch < starts.size() ? starts[stretch] : keys.size());
  };
  for (std::size_t width = 1; width < starts.size(); width *= 2) {
    for (std::size_t first = 0; first + width < starts.size(); first += 2 * width) {
      std::inplace_merge(at(first), at(first + width), at(first + 2 * width), less);
    }
  }
}

}  // namespace

struct SpilledRebuild::Run {
  std::string path;                                      // a spilled run; empty: in memory
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;  // an in-memory run's
};

namespace {

// A run read a row at a time, in key order, with each row's sortable key and rank.
class RunCursor {
 public:
  RunCursor(const std::string& path, const std::vector<std::shared_ptr<arrow::RecordBatch>>* batches,
            const std::vector<std::string>& keys)
      : batches_(batches), keys_(keys) {
    if (!path.empty()) reader_ = std::make_unique<RunReader>(path);
    LoadNextBatch();
  }

  bool Valid() const { return batch_ != nullptr; }
  const std::string& key() const { return row_keys_[static_cast<std::size_t>(row_)]; }
  const std::shared_ptr<arrow::RecordBatch>& batch() const { return batch_; }
  std::int64_t row() const { return row_; }
  const ImageRanks& ranks() const { return *ranks_; }

  void Advance() {
    if (++row_ >= batch_->num_rows()) LoadNextBatch();
  }

 private:
  void LoadNextBatch() {
    for (;;) {
      if (reader_) {
        batch_ = reader_->Next();
      } else {
        batch_ = next_ < batches_->size() ? (*batches_)[next_++] : nullptr;
      }
      if (!batch_ || batch_->num_rows() > 0) break;
    }
    row_ = 0;
    if (!batch_) return;
    row_keys_ = SortableKeys(*batch_, keys_);
    ranks_ = std::make_unique<ImageRanks>(*batch_);
  }

  std::unique_ptr<RunReader> reader_;
  const std::vector<std::shared_ptr<arrow::RecordBatch>>* batches_;
  std::size_t next_ = 0;
  const std::vector<std::string>& keys_;
  std::shared_ptr<arrow::RecordBatch> batch_;
  std::vector<std::string> row_keys_;
  std::unique_ptr<ImageRanks> ranks_;
  std::int64_t row_ = 0;
};

// Rows picked from batches, in order, gathered into one batch when written.
class PickedRows {
 public:
  PickedRows(std::shared_ptr<arrow::Schema> schema, std::int64_t max_bytes)
      : schema_(std::move(schema)), max_bytes_(max_bytes) {}

  void Add(const std::shared_ptr<arrow::RecordBatch>& batch, std::int64_t row) {
    // Rows come in runs from one batch: the last batch's offset is kept at hand.
    if (batch.get() != last_batch_) {
      auto [it, added] = offset_of_.emplace(batch.get(), offset_);
      if (added) {
        batches_.push_back(batch);
        offset_ += batch->num_rows();
        bytes_ += BytesOf(*batch);
      }
      last_batch_ = batch.get();
      last_offset_ = it->second;
    }
    indices_.push_back(last_offset_ + row);
  }

  bool Full() const { return static_cast<std::int64_t>(indices_.size()) >= kOutputRows || bytes_ >= max_bytes_; }

  // The rows picked since the last call, in one batch; null when none.
  std::shared_ptr<arrow::RecordBatch> Take() {
    if (indices_.empty()) return nullptr;
    auto batch = GatherRows(schema_, batches_, indices_, "merging runs");
    batches_.clear();
    offset_of_.clear();
    indices_.clear();
    offset_ = 0;
    bytes_ = 0;
    last_batch_ = nullptr;
    return batch;
  }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::int64_t max_bytes_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::unordered_map<const arrow::RecordBatch*, std::int64_t> offset_of_;
  std::vector<std::int64_t> indices_;
  std::int64_t offset_ = 0;
  std::int64_t bytes_ = 0;
  const arrow::RecordBatch* last_batch_ = nullptr;
  std::int64_t last_offset_ = 0;
};

}  // namespace

// Each key's latest image across runs, in key order. `final`: images that delete are counted
// and left out, others are written in silver's columns; otherwise every image is kept whole,
// for a merged run.
class SpilledRebuild::Merge {
 public:
  using Emit = std::function<void(const std::shared_ptr<arrow::RecordBatch>&)>;

  static RebuildCounts Apply(const SpilledRebuild& rebuild, const std::vector<const SpilledRebuild::Run*>& runs,
                           bool final, const Emit& emit) {
    std::vector<std::unique_ptr<RunCursor>> cursors;
    for (const auto* run : runs) {
      cursors.push_back(std::make_unique<RunCursor>(run->path, &run->batches, rebuild.keys_));
    }
    auto later = [&](std::size_t a, std::size_t b) {
      const int order = cursors[a]->key().compare(cursors[b]->key());
      return order != 0 ? order > 0 : a > b;
    };
    std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
    for (std::size_t c = 0; c < cursors.size(); ++c) {
      if (cursors[c]->Valid()) heap.push(c);
    }
    std::vector<int> silver_columns(static_cast<std::size_t>(rebuild.silver_->num_fields()));
    std::iota(silver_columns.begin(), silver_columns.end(), 0);
    auto write = [&](const std::shared_ptr<arrow::RecordBatch>& batch) {
      if (!batch) return;
      emit(final ? ValueOrInternal(batch->SelectColumns(silver_columns), "merging runs") : batch);
    };

    RebuildCounts counts;
    PickedRows picked(rebuild.run_schema_, rebuild.budget_.memory_bytes / 4);
    std::vector<std::size_t> tied;
    // A cursor whose key is below every key in the heap, kept out of it: runs that hold
    // ranges of keys (a snapshot is read in key order) are then merged with one comparison a
    // row instead of a heap's pop and push.
    std::optional<std::size_t> lowest;
    while (lowest || !heap.empty()) {
      if (lowest) {
        tied.assign(1, *lowest);
        lowest.reset();
      } else {
        tied.assign(1, heap.top());
        heap.pop();
        while (!heap.empty() && cursors[heap.top()]->key() == cursors[tied.front()]->key()) {
          tied.push_back(heap.top());
          heap.pop();
        }
      }
      std::size_t winner = tied.front();
      for (std::size_t t = 1; t < tied.size(); ++t) {
        const auto& c = *cursors[tied[t]];
        if (ImageRanks::Outranks(c.ranks(), c.row(), cursors[winner]->ranks(), cursors[winner]->row())) {
          winner = tied[t];
        }
      }
      const auto& best = *cursors[winner];
      if (final && best.ranks().Deletes(best.row())) {
        ++counts.deleted;
      } else {
        picked.Add(best.batch(), best.row());
        if (final) ++counts.upserted;
      }
      for (const std::size_t c : tied) {
        cursors[c]->Advance();
        if (!cursors[c]->Valid()) continue;
        if (tied.size() == 1 && (heap.empty() || cursors[c]->key() < cursors[heap.top()]->key())) {
          lowest = c;
        } else {
          heap.push(c);
        }
      }
      if (picked.Full()) write(picked.Take());
    }
    write(picked.Take());
    return counts;
  }
};

SpilledRebuild::SpilledRebuild(std::vector<std::string> keys, const arrow::Schema& bronze,
                               std::shared_ptr<arrow::Schema> silver, RebuildBudget budget)
    : keys_(std::move(keys)), silver_(std::move(silver)), budget_(std::move(budget)) {
  if (budget_.memory_bytes < (1LL << 20)) {
    throw ConfigError("a silver rebuild needs a memory budget of at least 1 MiB ([engine] memory_budget)");
  }
  arrow::FieldVector fields = silver_->fields();
  for (std::string_view rank : {kCommandIdColumn, kSeqvalColumn, kOperationColumn}) {
    if (HasField(*silver_, rank)) continue;
    if (auto field = bronze.GetFieldByName(std::string(rank))) fields.push_back(field);
  }
  run_schema_ = arrow::schema(std::move(fields));
}

SpilledRebuild::~SpilledRebuild() = default;

std::int64_t SpilledRebuild::SpillBatchBytes() const {
  return std::clamp<std::int64_t>(budget_.memory_bytes / 512, 64 << 10, 4 << 20);
}

void SpilledRebuild::Add(const arrow::RecordBatch& bronze_rows) {
  if (adding_done_) throw InternalError("rows added to a silver rebuild after it was written");
  if (bronze_rows.num_rows() == 0) return;
  auto aligned = delta::AlignBatchToSchema(bronze_rows, run_schema_, "silver");
  rows_added_ += aligned->num_rows();
  // A big batch (a whole row group) is taken in pieces of an eighth of the budget, so that a
  // run is cut near half the budget whatever the batches' size.
  const std::int64_t bytes = std::max<std::int64_t>(1, BytesOf(*aligned));
  const std::int64_t piece_rows =
      std::max<std::int64_t>(1, aligned->num_rows() * (budget_.memory_bytes / 8) / bytes);
  for (std::int64_t at = 0; at < aligned->num_rows(); at += piece_rows) {
    auto piece = aligned->Slice(at, piece_rows);
    held_bytes_ += BytesOf(*piece);
    held_.push_back(std::move(piece));
    if (held_bytes_ >= budget_.memory_bytes / 2) SpillHeldRows();
  }
}

std::vector<std::shared_ptr<arrow::RecordBatch>> SpilledRebuild::CutHeldRows() {
  delta::EnsureComputeKernels();
  // Every held row's sortable key and rank; rows ordered by key, the latest image of each kept.
  std::vector<std::string> row_keys;
  std::vector<std::unique_ptr<ImageRanks>> ranks;
  std::vector<std::int64_t> offsets;
  std::int64_t total = 0;
  for (const auto& batch : held_) {
    auto keys = SortableKeys(*batch, keys_);
    row_keys.insert(row_keys.end(), std::make_move_iterator(keys.begin()), std::make_move_iterator(keys.end()));
    ranks.push_back(std::make_unique<ImageRanks>(*batch));
    offsets.push_back(total);
    total += batch->num_rows();
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(total));
  std::iota(order.begin(), order.end(), 0);
  SortByKey(row_keys, order);
  auto batch_of = [&](std::int64_t i) {
    return static_cast<std::size_t>(std::upper_bound(offsets.begin(), offsets.end(), i) - offsets.begin() - 1);
  };
  auto outranks = [&](std::int64_t a, std::int64_t b) {
    const auto ba = batch_of(a), bb = batch_of(b);
    return ImageRanks::Outranks(*ranks[ba], a - offsets[ba], *ranks[bb], b - offsets[bb]);
  };
  std::vector<std::int64_t> latest;
  latest.reserve(static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < order.size();) {
    std::int64_t best = order[i];
    std::size_t j = i + 1;
    for (; j < order.size() && row_keys[static_cast<std::size_t>(order[j])] == row_keys[static_cast<std::size_t>(best)]; ++j) {
      if (outranks(order[j], best)) best = order[j];
    }
    latest.push_back(best);
    i = j;
  }
  row_keys = {};
  const auto sorted = GatherRows(run_schema_, held_, latest, "cutting a run");
  held_.clear();
  held_bytes_ = 0;

  // Batches of about SpillBatchBytes each, so that a merge holds that much per run.
  const std::int64_t bytes = std::max<std::int64_t>(1, BytesOf(*sorted));
  const std::int64_t rows_per_batch =
      std::max<std::int64_t>(1, SpillBatchBytes() * sorted->num_rows() / bytes);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (std::int64_t at = 0; at < sorted->num_rows(); at += rows_per_batch) {
    batches.push_back(sorted->Slice(at, rows_per_batch));
  }
  return batches;
}

void SpilledRebuild::SpillHeldRows() {
  if (!spill_) spill_ = std::make_unique<SpillDirectory>(budget_.spill_directory);
  auto run = std::make_unique<Run>();
  run->path = spill_->NextRunPath();
  RunWriter writer(run->path, run_schema_);
  for (const auto& batch : CutHeldRows()) writer.Write(*batch);
  spilled_bytes_ += writer.Close();
  ++runs_spilled_;
  runs_.push_back(std::move(run));
}

void SpilledRebuild::MergeDownToFanIn() {
  // A batch of each run and as much again for the rows picked from them: half the budget.
  const auto fan_in = static_cast<std::size_t>(
      std::max<std::int64_t>(2, budget_.memory_bytes / 2 / (2 * SpillBatchBytes())));
  while (runs_.size() > fan_in) {
    std::vector<const Run*> oldest;
    for (std::size_t r = 0; r < fan_in; ++r) oldest.push_back(runs_[r].get());
    auto merged = std::make_unique<Run>();
    merged->path = spill_->NextRunPath();
    RunWriter writer(merged->path, run_schema_);
    Merge::Apply(*this, oldest, /*final=*/false, [&](const std::shared_ptr<arrow::RecordBatch>& batch) {
      // Cut again to the spill batch size: picked batches are bigger.
      const std::int64_t rows_per_batch = std::max<std::int64_t>(
          1, SpillBatchBytes() * batch->num_rows() / std::max<std::int64_t>(1, BytesOf(*batch)));
      for (std::int64_t at = 0; at < batch->num_rows(); at += rows_per_batch) {
        writer.Write(*batch->Slice(at, rows_per_batch));
      }
    });
    spilled_bytes_ += writer.Close();
    ++runs_spilled_;
    runs_.erase(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(fan_in));
    runs_.insert(runs_.begin(), std::move(merged));
  }
}

RebuildCounts SpilledRebuild::WriteTo(delta::DataFileStream& out) {
  if (!adding_done_) {
    adding_done_ = true;
    if (!held_.empty()) {
      if (runs_.empty()) {
        // Everything fitted: the one run stays in memory.
        auto run = std::make_unique<Run>();
        run->batches = CutHeldRows();
        runs_.push_back(std::move(run));
      } else {
        SpillHeldRows();
      }
    }
    MergeDownToFanIn();
  }
  std::vector<const Run*> runs;
  for (const auto& run : runs_) runs.push_back(run.get());
  return Merge::Apply(*this, runs, /*final=*/true, [&](const std::shared_ptr<arrow::RecordBatch>& batch) {
    out.Write(batch);
  });
}

}  // namespace mssql_cdc
