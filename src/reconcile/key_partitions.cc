#include "reconcile/key_partitions.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <filesystem>
#include <functional>
#include <string_view>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "silver/latest_images.h"

namespace mssql_cdc {
namespace {

// The part of an encoded key: its hash mixed, then scaled into [0, parts) by its high bits, so
// that a hash whose low bits repeat still spreads.
int PartOf(std::string_view encoded, int parts) {
  const std::uint64_t mixed = std::hash<std::string_view>{}(encoded) * 0x9E3779B97F4A7C15ULL;
  return static_cast<int>((static_cast<unsigned __int128>(mixed) * static_cast<unsigned>(parts)) >> 64);
}

}  // namespace

int PartsFor(std::int64_t rows, std::int64_t piece_rows) {
  const std::int64_t piece = std::max<std::int64_t>(1, piece_rows);
  if (rows <= piece) return 1;
  const std::int64_t parts = (rows + rows / 4 + piece - 1) / piece;
  return static_cast<int>(std::min<std::int64_t>(parts, 1 << 16));
}

KeyPartitions::KeyPartitions(SpillDirectory* spill, std::vector<std::string> keys, int parts)
    : spill_(spill), keys_(std::move(keys)), parts_(static_cast<std::size_t>(parts)) {
  if (parts < 1 || (parts > 1 && spill_ == nullptr)) {
    throw InternalError("reconcile: key partitions need a spill directory for more than one part");
  }
}

KeyPartitions::~KeyPartitions() {
  // Its files go with it, so that the ranges of one run do not fill the disk one after another.
  for (PartFile& part : parts_) {
    part.writer.reset();
    std::error_code ignored;
    if (!part.path.empty()) std::filesystem::remove(part.path, ignored);
  }
}

void KeyPartitions::Add(const arrow::RecordBatch& batch) {
  if (!schema_) schema_ = batch.schema();
  if (batch.num_rows() == 0) return;
  if (parts_.size() == 1) {
    parts_[0].rows += batch.num_rows();
    held_.push_back(batch.Slice(0));
    return;
  }
  const std::vector<std::string> encoded = EncodeKeys(batch, keys_);
  const int parts = static_cast<int>(parts_.size());
  // Rows grouped by part with one counting sort, taken in that order, then sliced per part.
  std::vector<int> part_of(encoded.size());
  std::vector<std::int64_t> starts(parts_.size() + 1, 0);
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    part_of[i] = PartOf(encoded[i], parts);
    ++starts[static_cast<std::size_t>(part_of[i]) + 1];
  }
  for (std::size_t p = 1; p < starts.size(); ++p) starts[p] += starts[p - 1];
  std::vector<std::int64_t> next(starts.begin(), starts.end() - 1);
  std::vector<std::int64_t> indices(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    indices[static_cast<std::size_t>(next[static_cast<std::size_t>(part_of[i])]++)] = static_cast<std::int64_t>(i);
  }
  arrow::Int64Builder order;
  std::shared_ptr<arrow::Array> order_array;
  CheckInternal(order.AppendValues(indices), "reconcile: partitioning rows");
  CheckInternal(order.Finish(&order_array), "reconcile: partitioning rows");
  delta::EnsureComputeKernels();
  const auto grouped = ValueOrInternal(arrow::compute::Take(batch.Slice(0), order_array), "reconcile: partitioning rows")
                           .record_batch();
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const std::int64_t length = starts[p + 1] - starts[p];
    if (length == 0) continue;
    PartFile& part = parts_[p];
    if (!part.writer) {
      if (!part.path.empty()) throw InternalError("reconcile: rows added to key partitions after Finish");
      part.path = spill_->NextRunPath();
      part.writer = std::make_unique<RunWriter>(part.path, schema_);
    }
    part.writer->Write(*grouped->Slice(starts[p], length));
    part.rows += length;
  }
}

std::int64_t KeyPartitions::Finish() {
  std::int64_t bytes = 0;
  for (PartFile& part : parts_) {
    if (!part.writer) continue;
    bytes += part.writer->Close();
    part.writer.reset();
  }
  return bytes;
}

std::shared_ptr<arrow::Table> KeyPartitions::Part(int part) const {
  if (!schema_) throw InternalError("reconcile: key partitions read before any rows were added");
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  const PartFile& file = parts_[static_cast<std::size_t>(part)];
  if (parts_.size() == 1) {
    batches = held_;
  } else if (file.rows > 0) {
    RunReader reader(file.path);
    while (auto batch = reader.Next()) batches.push_back(std::move(batch));
  }
  return ValueOrInternal(arrow::Table::FromRecordBatches(schema_, batches), "reconcile: a part's rows");
}

}  // namespace mssql_cdc
