// WriteDataFiles: Arrow record batches into Parquet data files with Delta stats.
//
// The rows are cut into contiguous ranges, one per planned file, written on a few threads at
// once when the input spans several target-sized files (Parquet encoding is CPU-bound). Within
// a range, row groups are sized from the bytes per row seen so far so that a file ends near
// the target size; a file that reaches the target anyway is closed and the rest of its range
// goes to another file.
#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/util/byte_size.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "core/errors.h"
#include "delta/data_file_io.h"
#include "delta/data_files.h"
#include "storage/file_system.h"
#include "delta/parquet_file_writer.h"

namespace mssql_cdc::delta {
namespace {

// Rows encoded up front to learn how many bytes a row takes in Parquet, when planning files.
constexpr std::int64_t kProbeRows = 50'000;
// Writer threads at most: each holds one row group's encoded pages in memory.
constexpr unsigned kMaxWriterThreads = 4;

// The input batches addressed by row number across all of them.
class InputRows {
 public:
  explicit InputRows(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
    for (const auto& batch : batches) {
      if (batch->num_rows() == 0) continue;
      batches_.push_back(batch);
      starts_.push_back(total_);
      total_ += batch->num_rows();
    }
  }
  std::int64_t total() const { return total_; }

  // Zero-copy slices covering rows [begin, begin + count).
  std::vector<std::shared_ptr<arrow::RecordBatch>> Slice(std::int64_t begin, std::int64_t count) const {
    std::vector<std::shared_ptr<arrow::RecordBatch>> slices;
    auto it = std::upper_bound(starts_.begin(), starts_.end(), begin);
    for (std::size_t i = static_cast<std::size_t>(it - starts_.begin()) - 1; count > 0; ++i) {
      const std::int64_t offset = begin - starts_[i];
      const std::int64_t take = std::min(batches_[i]->num_rows() - offset, count);
      slices.push_back(batches_[i]->Slice(offset, take));
      begin += take;
      count -= take;
    }
    return slices;
  }

  // Arrow bytes per row of the input: a first guess at Parquet's, which encoding and
  // compression only make smaller.
  double ArrowBytesPerRow() const {
    if (total_ == 0) return 0;
    std::int64_t bytes = 0;
    for (const auto& batch : batches_) bytes += arrow::util::TotalBufferSize(*batch);
    return static_cast<double>(bytes) / static_cast<double>(total_);
  }

 private:
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<std::int64_t> starts_;  // first row number of each batch
  std::int64_t total_ = 0;
};

// Writes the rows of one WriteDataFiles call; WriteRange may run on several threads at once.
class DataFileSetWriter {
 public:
  DataFileSetWriter(storage::FileSystem& fs, std::string table_root, std::shared_ptr<arrow::Schema> schema,
                    const InputRows& input, const WriteOptions& options)
      : fs_(fs), table_root_(std::move(table_root)), schema_(std::move(schema)), input_(input),
        options_(options), properties_(DataFileWriterProperties(options)),
        arrow_properties_(DataFileArrowProperties()),
        row_group_rows_(std::max<std::int64_t>(1, options.row_group_rows)),
        compression_(options.compression) {}

  // Parquet bytes per row of a sample of the input, encoded in memory.
  double ProbeBytesPerRow() const {
    const std::int64_t rows = std::min(input_.total(), kProbeRows);
    auto sink = arrow::io::BufferOutputStream::Create();
    ThrowIfError(sink.status(), "cannot probe the Parquet size");
    auto writer = parquet::arrow::FileWriter::Open(*schema_, arrow::default_memory_pool(), *sink,
                                                   properties_, arrow_properties_);
    ThrowIfError(writer.status(), "cannot probe the Parquet size");
    auto table = arrow::Table::FromRecordBatches(schema_, input_.Slice(0, rows));
    ThrowIfError(table.status(), "cannot probe the Parquet size");
    ThrowIfError((*writer)->WriteTable(**table, rows), "cannot probe the Parquet size");
    ThrowIfError((*writer)->Close(), "cannot probe the Parquet size");
    auto bytes = (*sink)->Tell();
    ThrowIfError(bytes.status(), "cannot probe the Parquet size");
    return static_cast<double>(*bytes) / static_cast<double>(rows);
  }

  // Writes rows [begin, end), the `range`-th range, into one file, or more when a file reaches the target first.
  std::vector<AddFile> WriteRange(std::size_t range, std::int64_t begin, std::int64_t end,
                                  double bytes_per_row) {
    std::vector<AddFile> added;
    std::unique_ptr<ParquetFileWriter> file;
    std::int64_t file_bytes = 0;
    while (begin < end) {
      if (!file) {
        file = OpenFile(range, static_cast<int>(added.size()));
        file_bytes = 0;
      }
      const std::int64_t rows = std::min(end - begin, RowGroupLimit(file_bytes, bytes_per_row));
      file_bytes = file->WriteRowGroup(input_.Slice(begin, rows));
      begin += rows;
      bytes_per_row = static_cast<double>(file_bytes) / static_cast<double>(file->rows());
      // The rest of a planned range stays in this file when it is small: no tiny last files.
      const bool rest_is_small = static_cast<double>(end - begin) * bytes_per_row <
                                 0.1 * static_cast<double>(options_.target_file_bytes);
      if (file_bytes >= options_.target_file_bytes && !(planned_ && rest_is_small)) {
        added.push_back(file->Close(fs_));
        file.reset();
      }
    }
    if (file) added.push_back(file->Close(fs_));
    return added;
  }

  void set_planned(bool planned) { planned_ = planned; }

  // Deletes every file this writer created; after a failure, none of them is committed.
  void DeleteAll() {
    std::lock_guard lock(mutex_);
    for (const auto& path : created_) {
      try {
        fs_.Delete(path);
      } catch (...) {
        // Not named by any commit: leaving it behind is harmless.
      }
    }
  }

 private:
  std::unique_ptr<ParquetFileWriter> OpenFile(std::size_t range, int file_of_range) {
    const std::string name = DataFileName(range, file_of_range, compression_);
    if (options_.on_file) options_.on_file(name);
    const std::string full_path = JoinPath(table_root_, name);
    {
      std::lock_guard lock(mutex_);
      created_.push_back(full_path);
    }
    return std::make_unique<ParquetFileWriter>(fs_, full_path, name, schema_, properties_,
                                               arrow_properties_, options_.stats_columns);
  }

  // Rows for the next row group: so many that the file ends just past the target (2% margin:
  // a slightly low estimate must not leave a tiny last row group), at most row_group_rows.
  // A file kept open past the target (the small rest of its range) takes full row groups.
  std::int64_t RowGroupLimit(std::int64_t file_bytes, double bytes_per_row) const {
    if (bytes_per_row <= 0 || file_bytes >= options_.target_file_bytes) return row_group_rows_;
    const double remaining = static_cast<double>(options_.target_file_bytes - file_bytes);
    const auto rows = static_cast<std::int64_t>(remaining * 1.02 / bytes_per_row) + 1;
    return std::clamp<std::int64_t>(rows, 1, row_group_rows_);
  }

  storage::FileSystem& fs_;
  const std::string table_root_;
  const std::shared_ptr<arrow::Schema> schema_;
  const InputRows& input_;
  const WriteOptions& options_;
  const std::shared_ptr<parquet::WriterProperties> properties_;
  const std::shared_ptr<parquet::ArrowWriterProperties> arrow_properties_;
  const std::int64_t row_group_rows_;
  const std::string compression_;
  bool planned_ = false;
  std::mutex mutex_;
  std::vector<std::string> created_;
};

}  // namespace

std::vector<AddFile> WriteDataFiles(storage::FileSystem& fs, const std::string& table_root,
                                    const std::shared_ptr<arrow::Schema>& table_schema,
                                    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                    const WriteOptions& options) {
  for (const auto& batch : batches) CheckBatchSchema(*table_schema, *batch);
  const InputRows input(batches);
  DataFileSetWriter writer(fs, table_root, table_schema, input, options);
  if (input.total() == 0) return {};

  const double target = static_cast<double>(std::max<std::int64_t>(1, options.target_file_bytes));
  const unsigned threads = std::min(kMaxWriterThreads, std::max(1u, std::thread::hardware_concurrency()));
  double bytes_per_row = input.ArrowBytesPerRow();
  // Ranges of about one target file each, planned from a probe of the Parquet size, when the
  // input is big enough for several files and there are cores to write them at once.
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (threads > 1 && bytes_per_row * static_cast<double>(input.total()) > 2 * target) {
    bytes_per_row = writer.ProbeBytesPerRow();
    // Rounded up: a range should fit in one file, with room for an estimate a little low.
    const auto files = static_cast<std::int64_t>(
        std::ceil(bytes_per_row * static_cast<double>(input.total()) / target));
    if (files >= 2) {
      writer.set_planned(true);
      for (std::int64_t i = 0; i < files; ++i)
        ranges.emplace_back(input.total() * i / files, input.total() * (i + 1) / files);
    }
  }
  if (ranges.empty()) ranges.emplace_back(0, input.total());

  std::vector<std::vector<AddFile>> added(ranges.size());
  std::atomic<std::size_t> next_range{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&]() {
    for (std::size_t i; (i = next_range.fetch_add(1)) < ranges.size();) {
      try {
        added[i] = writer.WriteRange(i, ranges[i].first, ranges[i].second, bytes_per_row);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next_range = ranges.size();  // the others stop after their current range
      }
    }
  };
  fs.CreateDirectories(table_root);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, ranges.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (failure) {
    writer.DeleteAll();
    std::rethrow_exception(failure);
  }
  std::vector<AddFile> result;
  for (auto& files : added) result.insert(result.end(), files.begin(), files.end());
  return result;
}

}  // namespace mssql_cdc::delta
