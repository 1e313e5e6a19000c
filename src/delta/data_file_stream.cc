#include "delta/data_file_stream.h"

#include <arrow/api.h>
#include <arrow/util/byte_size.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "delta/data_file_io.h"
#include "storage/file_system.h"
#include "delta/parquet_file_writer.h"
#include "delta/schema.h"

namespace mssql_cdc::delta {

DataFileStream::DataFileStream(std::shared_ptr<storage::FileSystem> fs, std::string table_root,
                               std::shared_ptr<arrow::Schema> schema, WriteOptions options,
                               std::size_t part)
    : fs_(std::move(fs)), table_root_(std::move(table_root)), schema_(std::move(schema)),
      options_(std::move(options)), part_(part),
      properties_(DataFileWriterProperties(options_)),
      arrow_properties_(DataFileArrowProperties()) {}

DataFileStream::~DataFileStream() {
  if (handed_over_) return;
  file_.reset();  // closes the sink before the file is deleted
  DeleteCreated();
}

void DataFileStream::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (!batch || batch->num_rows() == 0) return;
  buffered_.push_back(batch->schema()->Equals(*schema_, /*check_metadata=*/false)
                          ? batch
                          : AlignBatchToSchema(*batch, schema_, table_root_));
  buffered_rows_ += batch->num_rows();
  buffered_bytes_ += arrow::util::TotalBufferSize(*batch);
  rows_ += batch->num_rows();
  if (buffered_rows_ >= std::max<std::int64_t>(1, options_.row_group_rows) ||
      buffered_bytes_ >= RowGroupBytes()) {
    FlushRowGroup();
  }
}

std::int64_t DataFileStream::RowGroupBytes() const {
  // Until a row group tells, Parquet is taken to be as big as Arrow (it is rarely bigger).
  std::int64_t limit = std::max<std::int64_t>(
      1, std::min(options_.row_group_bytes, options_.target_file_bytes - file_bytes_));
  if (written_arrow_bytes_ == 0) return limit;
  // Parquet bytes per Arrow byte so far: a row group that ends the file near its target.
  const double ratio = static_cast<double>(written_parquet_bytes_) / static_cast<double>(written_arrow_bytes_);
  const double room = static_cast<double>(options_.target_file_bytes - file_bytes_);
  if (ratio > 0 && room > 0) limit = std::min(limit, static_cast<std::int64_t>(room / ratio) + 1);
  return limit;
}

void DataFileStream::FlushRowGroup() {
  if (buffered_.empty()) return;
  if (!file_) {
    const std::string name = DataFileName(part_, static_cast<int>(finished_.size()), options_.compression);
    if (options_.on_file) options_.on_file(name);
    const std::string full_path = JoinPath(table_root_, name);
    if (created_.empty()) fs_->CreateDirectories(table_root_);
    created_.push_back(full_path);
    file_ = std::make_unique<ParquetFileWriter>(*fs_, full_path, name, schema_, properties_,
                                                arrow_properties_, options_.stats_columns);
  }
  const std::int64_t file_bytes = file_->WriteRowGroup(buffered_);
  written_parquet_bytes_ += file_bytes - file_bytes_;
  written_arrow_bytes_ += buffered_bytes_;
  file_bytes_ = file_bytes;
  buffered_.clear();
  buffered_rows_ = 0;
  buffered_bytes_ = 0;
  // Closed near the target: the last row group of a file is sized to end there, and a rest
  // under a tenth of the target would only make a tiny row group.
  if (file_bytes >= options_.target_file_bytes * 9 / 10) CloseFile();
}

void DataFileStream::CloseFile() {
  finished_.push_back(file_->Close(*fs_));
  file_.reset();
  file_bytes_ = 0;
}

std::vector<AddFile> DataFileStream::Finish() {
  FlushRowGroup();
  if (file_) CloseFile();
  handed_over_ = true;
  return std::move(finished_);
}

void DataFileStream::Discard() {
  file_.reset();
  DeleteCreated();
  created_.clear();
  handed_over_ = true;
}

void DataFileStream::DeleteCreated() {
  for (const auto& path : created_) {
    try {
      fs_->Delete(path);
    } catch (const std::exception& e) {
      // Named by no commit, so invisible to readers; a later clean-up removes it.
      spdlog::warn("could not delete the unfinished data file {}: {}", path, e.what());
    }
  }
}

}  // namespace mssql_cdc::delta
