#include "silver/spill_runs.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/api.h>
#include <arrow/util/compression.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

std::string SpillParent(const std::string& parent) {
  if (!parent.empty()) return parent;
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

void CheckWrite(const arrow::Status& status, const std::string& path) {
  if (!status.ok()) throw SourceError("cannot write the spill file " + path + ": " + status.ToString());
}

}  // namespace

SpillDirectory::SpillDirectory(const std::string& parent) {
  const std::string where = SpillParent(parent);
  std::string pattern = where + "/mssql-cdc-spill-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    throw ConfigError("cannot create a spill directory under " + where + ": " + std::strerror(errno) +
                      " (give [engine] spill_directory a writable local directory)");
  }
  path_ = name.data();
}

SpillDirectory::~SpillDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string SpillDirectory::NextRunPath() { return path_ + "/run-" + std::to_string(runs_++) + ".arrows"; }

RunWriter::RunWriter(std::string path, std::shared_ptr<arrow::Schema> schema) : path_(std::move(path)) {
  auto file = arrow::io::FileOutputStream::Open(path_);
  CheckWrite(file.status(), path_);
  auto options = arrow::ipc::IpcWriteOptions::Defaults();
  auto codec = arrow::util::Codec::Create(arrow::Compression::LZ4_FRAME);
  if (codec.ok()) options.codec = std::shared_ptr<arrow::util::Codec>(std::move(*codec));
  auto writer = arrow::ipc::MakeFileWriter(*file, std::move(schema), options);
  CheckWrite(writer.status(), path_);
  writer_ = *writer;
}

RunWriter::~RunWriter() {
  if (!closed_ && writer_) (void)writer_->Close();
}

void RunWriter::Write(const arrow::RecordBatch& batch) { CheckWrite(writer_->WriteRecordBatch(batch), path_); }

std::int64_t RunWriter::Close() {
  closed_ = true;
  CheckWrite(writer_->Close(), path_);
  std::error_code error;
  const auto size = std::filesystem::file_size(path_, error);
  return error ? 0 : static_cast<std::int64_t>(size);
}

RunReader::RunReader(const std::string& path) : path_(path) {
  auto file = arrow::io::ReadableFile::Open(path_);
  if (!file.ok()) throw SourceError("cannot read the spill file " + path_ + ": " + file.status().ToString());
  auto reader = arrow::ipc::RecordBatchFileReader::Open(*file);
  if (!reader.ok()) throw SourceError("cannot read the spill file " + path_ + ": " + reader.status().ToString());
  reader_ = *reader;
}

RunReader::~RunReader() = default;

std::shared_ptr<arrow::RecordBatch> RunReader::Next() {
  if (next_ >= reader_->num_record_batches()) return nullptr;
  auto batch = reader_->ReadRecordBatch(next_++);
  if (!batch.ok()) throw SourceError("cannot read the spill file " + path_ + ": " + batch.status().ToString());
  return *batch;
}

}  // namespace mssql_cdc
