// Data files of Delta tables: Parquet written from Arrow and read back, rollover, per-file
// stats as Spark writes them, filters and file skipping.
#include "delta/data_files.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>

#include "core/errors.h"
#include "delta/file_stats.h"
#include "storage/file_system.h"
#include "storage/store.h"
#include "delta/row_filter.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::delta {
namespace {

using testing::TempDir;

template <typename T>
T ValueOrDie(arrow::Result<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).ValueOrDie();
}

// A small JSON-ish array builder that avoids depending on Arrow's testing library: values are
// given as text and parsed in the type ("null" for NULL).
std::shared_ptr<arrow::Array> Column(const std::shared_ptr<arrow::DataType>& type,
                                     const std::vector<std::string>& values) {
  auto builder = ValueOrDie(arrow::MakeBuilder(type));
  for (const auto& text : values) {
    if (text == "null") {
      EXPECT_TRUE(builder->AppendNull().ok());
    } else {
      auto scalar = ParseLiteral(type, text);
      EXPECT_TRUE(scalar) << type->ToString() << " " << text;
      if (scalar) EXPECT_TRUE(builder->AppendScalar(*scalar).ok());
    }
  }
  return ValueOrDie(builder->Finish());
}

std::shared_ptr<arrow::Schema> EveryTypeSchema() {
  return arrow::schema({
      arrow::field("b", arrow::boolean()),
      arrow::field("i16", arrow::int16()),
      arrow::field("i32", arrow::int32()),
      arrow::field("i64", arrow::int64()),
      arrow::field("f32", arrow::float32()),
      arrow::field("f64", arrow::float64()),
      arrow::field("dec38", arrow::decimal128(38, 10)),
      arrow::field("dec18", arrow::decimal128(18, 2)),
      arrow::field("d", arrow::date32()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("ts_utc", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("s", arrow::utf8()),
      arrow::field("bin", arrow::binary()),
  });
}

std::shared_ptr<arrow::RecordBatch> EveryTypeBatch() {
  auto schema = EveryTypeSchema();
  std::vector<std::vector<std::string>> values = {
      {"true", "false", "null"},
      {"-32768", "null", "32767"},
      {"null", "-2147483648", "2147483647"},
      {"-9223372036854775808", "9223372036854775807", "null"},
      {"1.5", "null", "-0.25"},
      {"null", "2.5e300", "-1e-300"},
      {"1234567890123456789012345678.0123456789", "null", "-0.0000000001"},
      {"9999999999999999.99", "-0.01", "null"},
      {"2026-01-01", "null", "1969-12-31"},
      {"2026-01-01 12:34:56.789012", "1900-01-01 00:00:00", "null"},
      {"null", "2026-03-01T00:00:00.000001Z", "1970-01-01T00:00:00Z"},
      {"héllo", "", "null"},
      {"null", "\x01\x02", "abc"},
  };
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (int i = 0; i < schema->num_fields(); ++i)
    columns.push_back(Column(schema->field(i)->type(), values[i]));
  return arrow::RecordBatch::Make(schema, 3, columns);
}

std::string FullPath(const std::string& root, const AddFile& add) { return root + "/" + add.path; }

std::unique_ptr<parquet::ParquetFileReader> OpenParquet(const std::string& path) {
  return parquet::ParquetFileReader::OpenFile(path);
}

std::int64_t NumRecords(const AddFile& add) {
  auto stats = ParseFileStats(add.stats.value_or(""));
  EXPECT_TRUE(stats && stats->num_records);
  return stats && stats->num_records ? *stats->num_records : -1;
}

TEST(DataFiles, RoundTripsEveryEngineTypeWithNulls) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  auto batch = EveryTypeBatch();
  auto files = WriteDataFiles(*fs, dir.path(), batch->schema(), {batch}, WriteOptions{});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].data_change);
  EXPECT_EQ(files[0].size, static_cast<std::int64_t>(std::filesystem::file_size(FullPath(dir.path(), files[0]))));
  EXPECT_GT(files[0].modification_time, 1'600'000'000'000);
  EXPECT_EQ(files[0].path.rfind("part-00000-", 0), 0u);
  EXPECT_EQ(files[0].path.size(), std::string("part-00000-").size() + 36 + std::string("-c000.snappy.parquet").size());

  auto table = ReadDataFiles(*fs, dir.path(), files, batch->schema(), {});
  auto expected = ValueOrDie(arrow::Table::FromRecordBatches({batch}));
  EXPECT_TRUE(table->Equals(*expected)) << table->ToString() << "\nexpected\n" << expected->ToString();
}

TEST(DataFiles, WritesParquetTypesAsSparkExpects) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  auto batch = EveryTypeBatch();
  auto files = WriteDataFiles(*fs, dir.path(), batch->schema(), {batch}, WriteOptions{});
  auto reader = OpenParquet(FullPath(dir.path(), files[0]));
  const auto* schema = reader->metadata()->schema();
  auto column = [&](const std::string& name) { return schema->Column(schema->ColumnIndex(name)); };

  for (const char* name : {"ts", "ts_utc"}) {
    EXPECT_EQ(column(name)->physical_type(), parquet::Type::INT64) << name;
    const auto& logical = static_cast<const parquet::TimestampLogicalType&>(*column(name)->logical_type());
    ASSERT_TRUE(column(name)->logical_type()->is_timestamp()) << name;
    EXPECT_EQ(logical.time_unit(), parquet::LogicalType::TimeUnit::MICROS) << name;
    EXPECT_EQ(logical.is_adjusted_to_utc(), std::string(name) == "ts_utc") << name;
  }
  EXPECT_EQ(column("dec18")->physical_type(), parquet::Type::INT64);
  EXPECT_EQ(column("dec38")->physical_type(), parquet::Type::FIXED_LEN_BYTE_ARRAY);
  EXPECT_TRUE(column("dec38")->logical_type()->is_decimal());
  EXPECT_EQ(column("i16")->physical_type(), parquet::Type::INT32);
  EXPECT_TRUE(column("s")->logical_type()->is_string());
  EXPECT_EQ(column("d")->physical_type(), parquet::Type::INT32);
  EXPECT_TRUE(column("d")->logical_type()->is_date());
  // No Arrow schema blob: the file describes itself in Parquet terms only, as Spark's do.
  auto metadata = reader->metadata()->key_value_metadata();
  EXPECT_TRUE(metadata == nullptr || metadata->FindKey("ARROW:schema") < 0);
  EXPECT_EQ(reader->metadata()->RowGroup(0)->ColumnChunk(0)->compression(), parquet::Compression::SNAPPY);
}

TEST(DataFiles, ZstdFilesAreNamedAndCompressedSo) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  auto batch = EveryTypeBatch();
  WriteOptions options;
  options.compression = "zstd";
  auto files = WriteDataFiles(*fs, dir.path(), batch->schema(), {batch}, options);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].path.ends_with("-c000.zstd.parquet")) << files[0].path;
  auto reader = OpenParquet(FullPath(dir.path(), files[0]));
  EXPECT_EQ(reader->metadata()->RowGroup(0)->ColumnChunk(3)->compression(), parquet::Compression::ZSTD);
  auto table = ReadDataFiles(*fs, dir.path(), files, batch->schema(), {});
  EXPECT_TRUE(table->Equals(*ValueOrDie(arrow::Table::FromRecordBatches({batch}))));
}

TEST(DataFiles, RejectsUnknownCompressionAndMisalignedBatches) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  auto batch = EveryTypeBatch();
  WriteOptions options;
  options.compression = "lz4";
  EXPECT_THROW(WriteDataFiles(*fs, dir.path(), batch->schema(), {batch}, options), ConfigError);
  auto other = arrow::schema({arrow::field("x", arrow::int64())});
  EXPECT_THROW(WriteDataFiles(*fs, dir.path(), other, {batch}, WriteOptions{}), InternalError);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// `rows` rows of (id int64, name utf8) with ids from `first`.
std::shared_ptr<arrow::RecordBatch> IdNameBatch(std::int64_t first, std::int64_t rows) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (std::int64_t i = 0; i < rows; ++i) {
    EXPECT_TRUE(ids.Append(first + i).ok());
    EXPECT_TRUE(names.Append("name-" + std::to_string((first + i) * 7919 % 100003)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, rows, {ValueOrDie(ids.Finish()), ValueOrDie(names.Finish())});
}

TEST(DataFiles, RollsOverToNewFilesPastTheTargetSize) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int i = 0; i < 20; ++i) batches.push_back(IdNameBatch(i * 10'000, 10'000));
  WriteOptions options;
  options.target_file_bytes = 256 * 1024;
  options.row_group_rows = 30'000;
  auto files = WriteDataFiles(*fs, dir.path(), batches[0]->schema(), batches, options);

  ASSERT_GE(files.size(), 4u);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    total += NumRecords(files[i]);
    EXPECT_TRUE(files[i].path.starts_with("part-")) << files[i].path;
    if (i + 1 < files.size()) {
      // Files are planned from an estimate of the bytes per row and row groups sized from
      // what was written: every file but the last ends near the target.
      EXPECT_GE(files[i].size, options.target_file_bytes * 3 / 4) << i;
      EXPECT_LT(files[i].size, options.target_file_bytes * 3 / 2) << i;
    }
    auto reader = OpenParquet(FullPath(dir.path(), files[i]));
    EXPECT_EQ(reader->metadata()->num_rows(), NumRecords(files[i]));
    for (int g = 0; g < reader->metadata()->num_row_groups(); ++g) {
      EXPECT_LE(reader->metadata()->RowGroup(g)->num_rows(), options.row_group_rows);
      EXPECT_GT(reader->metadata()->RowGroup(g)->num_rows(), 0);
    }
  }
  // File names follow the row order.
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(file.path.substr(0, 10) + file.path.substr(47));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(total, 200'000);

  auto table = ReadDataFiles(*fs, dir.path(), files, batches[0]->schema(), {});
  auto expected = ValueOrDie(arrow::Table::FromRecordBatches(batches));
  EXPECT_TRUE(table->Equals(*expected));
}

TEST(DataFiles, NoRowsWriteNoFiles) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  auto empty = IdNameBatch(0, 0);
  EXPECT_TRUE(WriteDataFiles(*fs, dir.path(), empty->schema(), {empty}, WriteOptions{}).empty());
  EXPECT_TRUE(WriteDataFiles(*fs, dir.path(), empty->schema(), {}, WriteOptions{}).empty());
  auto table = ReadDataFiles(*fs, dir.path(), {}, empty->schema(), {});
  EXPECT_EQ(table->num_rows(), 0);
  EXPECT_TRUE(table->schema()->Equals(*empty->schema()));
}

// The local filesystem, failing to create the n-th output stream.
class FailingFileSystem : public storage::FileSystem {
 public:
  explicit FailingFileSystem(int fail_at) : fail_at_(fail_at) {}
  bool Exists(const std::string& p) override { return local_->Exists(p); }
  std::optional<std::string> ReadFile(const std::string& p) override { return local_->ReadFile(p); }
  std::vector<storage::FileInfo> List(const std::string& d) override { return local_->List(d); }
  void CreateDirectories(const std::string& p) override { local_->CreateDirectories(p); }
  bool WriteIfAbsent(const std::string& p, const std::string& c) override { return local_->WriteIfAbsent(p, c); }
  void WriteAtomic(const std::string& p, const std::string& c) override { local_->WriteAtomic(p, c); }
  void Delete(const std::string& p) override { local_->Delete(p); }
  storage::FileInfo Stat(const std::string& p) override { return local_->Stat(p); }
  std::shared_ptr<arrow::io::OutputStream> OpenOutputStream(const std::string& p) override {
    if (opened_.fetch_add(1) + 1 == fail_at_) throw SourceError("disk full: " + p);
    return local_->OpenOutputStream(p);
  }
  std::shared_ptr<arrow::io::RandomAccessFile> OpenInputFile(const std::string& p) override {
    return local_->OpenInputFile(p);
  }

 private:
  std::shared_ptr<storage::FileSystem> local_ = storage::LocalFileSystem();
  int fail_at_;
  std::atomic<int> opened_{0};
};

TEST(DataFiles, AFailedWriteLeavesNoFilesBehind) {
  TempDir dir;
  FailingFileSystem fs(3);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int i = 0; i < 20; ++i) batches.push_back(IdNameBatch(i * 10'000, 10'000));
  WriteOptions options;
  options.target_file_bytes = 256 * 1024;
  EXPECT_THROW(WriteDataFiles(fs, dir.path(), batches[0]->schema(), batches, options), SourceError);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(DataFiles, MissingColumnsReadAsNullAndNarrowTypesAreWidened) {
  TempDir dir;
  auto fs = storage::LocalFileSystem();
  auto old_schema = arrow::schema({arrow::field("id", arrow::int32()), arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  auto batch = arrow::RecordBatch::Make(
      old_schema, 2,
      {Column(arrow::int32(), {"1", "2"}), Column(old_schema->field(1)->type(), {"2026-01-01T00:00:00Z", "null"})});
  auto files = WriteDataFiles(*fs, dir.path(), old_schema, {batch}, WriteOptions{});

  auto new_schema = arrow::schema({arrow::field("id", arrow::int64()),
                                   arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "Etc/UTC")),
                                   arrow::field("added", arrow::utf8())});
  auto table = ReadDataFiles(*fs, dir.path(), files, new_schema, {});
  ASSERT_TRUE(table->schema()->Equals(*new_schema)) << table->schema()->ToString();
  EXPECT_EQ(table->column(2)->null_count(), 2);
  EXPECT_TRUE(table->column(0)->Equals(arrow::ChunkedArray(Column(arrow::int64(), {"1", "2"}))));
  auto filtered = ReadDataFiles(*fs, dir.path(), files, new_schema, {{"added", "=", "x"}});
  EXPECT_EQ(filtered->num_rows(), 0);
}

std::shared_ptr<arrow::RecordBatch> EventsBatch(const std::vector<std::string>& ids,
                                                const std::vector<std::string>& names,
                                                const std::vector<std::string>& times) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                               arrow::field("at", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  return arrow::RecordBatch::Make(schema, static_cast<std::int64_t>(ids.size()),
                                  {Column(arrow::int64(), ids), Column(arrow::utf8(), names),
                                   Column(schema->field(2)->type(), times)});
}

std::vector<std::int64_t> Ids(const std::shared_ptr<arrow::Table>& table) {
  std::vector<std::int64_t> ids;
  auto column = table->GetColumnByName("id");
  for (const auto& chunk : column->chunks()) {
    auto values = std::static_pointer_cast<arrow::Int64Array>(chunk);
    for (std::int64_t i = 0; i < values->length(); ++i) ids.push_back(values->Value(i));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

class DataFilesFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    // Three files with disjoint ranges of id, name and time.
    auto fs = storage::LocalFileSystem();
    batches_ = {
        EventsBatch({"1", "2", "3"}, {"apple", "avocado", "null"},
                    {"2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000500Z", "2026-01-01T00:00:01Z"}),
        EventsBatch({"10", "11", "12"}, {"banana", "blueberry", "cherry"},
                    {"2026-02-01T00:00:00Z", "null", "2026-02-02T00:00:00Z"}),
        EventsBatch({"20", "21", "22"}, {"mango", "melon", "null"},
                    {"2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z"}),
    };
    for (const auto& batch : batches_) {
      auto added = WriteDataFiles(*fs, dir_.path(), schema(), {batch}, WriteOptions{});
      files_.insert(files_.end(), added.begin(), added.end());
    }
  }
  std::shared_ptr<arrow::Schema> schema() const { return batches_[0]->schema(); }
  std::vector<std::int64_t> Read(const std::vector<FilterTerm>& filter) {
    return Ids(ReadDataFiles(*storage::LocalFileSystem(), dir_.path(), files_, schema(), filter));
  }
  // Deletes a file from disk, so that a read that opens it fails: it proves skipping.
  void DeleteFile(int index) { std::filesystem::remove(FullPath(dir_.path(), files_[index])); }

  TempDir dir_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<AddFile> files_;
};

using Ids_ = std::vector<std::int64_t>;

TEST_F(DataFilesFilter, ComparesIntegersStringsAndTimestamps) {
  EXPECT_EQ(Read({{"id", "=", "11"}}), (Ids_{11}));
  EXPECT_EQ(Read({{"id", "<", "3"}}), (Ids_{1, 2}));
  EXPECT_EQ(Read({{"id", ">=", "12"}}), (Ids_{12, 20, 21, 22}));
  EXPECT_EQ(Read({{"id", "!=", "2"}}), (Ids_{1, 3, 10, 11, 12, 20, 21, 22}));
  EXPECT_EQ(Read({{"name", "=", "melon"}}), (Ids_{21}));
  EXPECT_EQ(Read({{"name", "<", "b"}}), (Ids_{1, 2}));
  EXPECT_EQ(Read({{"name", ">=", "blueberry"}}), (Ids_{11, 12, 20, 21}));  // NULLs never match
  EXPECT_EQ(Read({{"at", "=", "2026-01-01T00:00:00.000500Z"}}), (Ids_{2}));
  EXPECT_EQ(Read({{"at", "<", "2026-02-01 00:00:00"}}), (Ids_{1, 2, 3}));
  EXPECT_EQ(Read({{"at", ">=", "2026-02-02T00:00:00Z"}}), (Ids_{12, 20, 21, 22}));
  EXPECT_EQ(Read({{"id", ">", "1"}, {"at", "<=", "2026-01-01T00:00:00.000500Z"}}), (Ids_{2}));
}

TEST_F(DataFilesFilter, SkipsFilesWhoseStatsExcludeEveryRow) {
  DeleteFile(1);
  DeleteFile(2);
  EXPECT_EQ(Read({{"id", "<", "10"}}), (Ids_{1, 2, 3}));
  EXPECT_EQ(Read({{"id", "=", "5"}}), (Ids_{}));
  EXPECT_EQ(Read({{"name", "<=", "avocado"}}), (Ids_{1, 2}));
  // The max time of file 0 is stored as ...00:00:01.000, its rows reach no further.
  EXPECT_EQ(Read({{"at", "<=", "2026-01-01T00:00:01Z"}}), (Ids_{1, 2, 3}));
  // A term whose range reaches a deleted file must open it.
  EXPECT_THROW(Read({{"id", ">", "3"}}), SourceError);
  EXPECT_THROW(Read({{"id", "!=", "3"}}), SourceError);
}

TEST_F(DataFilesFilter, TimestampMaxTruncatedToMillisecondsStillBoundsTheFile) {
  // File 0's max is 00:00:01 exactly, but its second row is 0.5 ms past midnight: the stats
  // say "...00:00:00.000" for that row's millisecond, and a filter just above must still read it.
  DeleteFile(1);
  DeleteFile(2);
  EXPECT_EQ(Read({{"at", ">", "2026-01-01T00:00:00.000400Z"}, {"at", "<", "2026-01-01T00:00:00.001Z"}}),
            (Ids_{2}));
}

TEST_F(DataFilesFilter, AllNullColumnsAndBadTermsAreHandled) {
  EXPECT_THROW(Read({{"nope", "=", "1"}}), ConfigError);
  EXPECT_THROW(Read({{"id", "~", "1"}}), ConfigError);
  EXPECT_THROW(Read({{"id", "=", "one"}}), ConfigError);
  EXPECT_THROW(Read({{"at", "=", "yesterday"}}), ConfigError);
  EXPECT_EQ(Read({{"ID", "=", "20"}}), (Ids_{20}));  // Delta names are case-insensitive
}

TEST(Stats, KnownBatchAsSparkWritesIt) {
  auto batch = EveryTypeBatch();
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  for (const auto& column : batch->columns()) columns.push_back(std::make_shared<arrow::ChunkedArray>(column));
  const std::string stats = ComputeFileStats(*batch->schema(), columns, batch->num_rows(), 32);
  EXPECT_EQ(stats,
            "{\"numRecords\":3,"
            "\"minValues\":{\"i16\":-32768,\"i32\":-2147483648,\"i64\":-9223372036854775808,"
            "\"f32\":-0.25,\"f64\":-1e-300,\"dec38\":-1E-10,\"dec18\":-0.01,"
            "\"d\":\"1969-12-31\",\"ts\":\"1900-01-01T00:00:00.000\",\"ts_utc\":\"1970-01-01T00:00:00.000Z\","
            "\"s\":\"\"},"
            "\"maxValues\":{\"i16\":32767,\"i32\":2147483647,\"i64\":9223372036854775807,"
            "\"f32\":1.5,\"f64\":2.5e+300,\"dec38\":1234567890123456789012345678.0123456789,"
            "\"dec18\":9999999999999999.99,\"d\":\"2026-01-01\",\"ts\":\"2026-01-01T12:34:56.789\","
            "\"ts_utc\":\"2026-03-01T00:00:00.000Z\",\"s\":\"h\xC3\xA9llo\"},"
            "\"nullCount\":{\"b\":1,\"i16\":1,\"i32\":1,\"i64\":1,\"f32\":1,\"f64\":1,\"dec38\":1,"
            "\"dec18\":1,\"d\":1,\"ts\":1,\"ts_utc\":1,\"s\":1,\"bin\":1}}");
}

// Strings order by their UTF-8 bytes, as Spark's UTF8String does: "\xC3\xA9" (é) after "z".
TEST(Stats, StringBoundsOrderByBytesAcrossChunksAndNulls) {
  for (const auto& type : {arrow::utf8(), arrow::large_utf8()}) {
    auto schema = arrow::schema({arrow::field("s", type)});
    auto column = std::make_shared<arrow::ChunkedArray>(
        arrow::ArrayVector{Column(type, {"m", "null", "\xC3\xA9t\xC3\xA9"}), Column(type, {"null", "null"}),
                           Column(type, {"z", "A", "zz"})});
    EXPECT_EQ(ComputeFileStats(*schema, {column}, 8, -1),
              "{\"numRecords\":8,\"minValues\":{\"s\":\"A\"},\"maxValues\":{\"s\":\"\xC3\xA9t\xC3\xA9\"},"
              "\"nullCount\":{\"s\":3}}")
        << type->ToString();
  }
}

TEST(Stats, FirstLeafColumnsOnlyAndNoBoundsForAllNullOrNonFinite) {
  auto schema = arrow::schema({arrow::field("a", arrow::float64()), arrow::field("b", arrow::int32()),
                               arrow::field("c", arrow::int32())});
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns = {
      std::make_shared<arrow::ChunkedArray>(Column(arrow::float64(), {"1", "NaN", "-inf", "3"})),
      std::make_shared<arrow::ChunkedArray>(Column(arrow::int32(), {"null", "null", "null", "null"})),
      std::make_shared<arrow::ChunkedArray>(Column(arrow::int32(), {"1", "2", "3", "4"}))};
  EXPECT_EQ(ComputeFileStats(*schema, columns, 4, 2),
            "{\"numRecords\":4,\"minValues\":{},\"maxValues\":{},\"nullCount\":{\"a\":0,\"b\":4}}");
  EXPECT_EQ(ComputeFileStats(*schema, columns, 4, 0),
            "{\"numRecords\":4,\"minValues\":{},\"maxValues\":{},\"nullCount\":{}}");
  columns[0] = std::make_shared<arrow::ChunkedArray>(Column(arrow::float64(), {"1", "NaN", "2", "3"}));
  EXPECT_EQ(ComputeFileStats(*schema, columns, 4, -1),
            "{\"numRecords\":4,\"minValues\":{\"a\":1.0,\"c\":1},\"maxValues\":{\"c\":4},"
            "\"nullCount\":{\"a\":0,\"b\":4,\"c\":0}}");
}

// A file written a row group at a time gets the stats of all its rows at once: every split of
// the every-type batch and of NaN, infinite, all-NULL and long-string columns agrees.
TEST(Stats, PartsFoldIntoTheStatsOfTheWhole) {
  auto whole_stats = [](const arrow::RecordBatch& batch, int stats_columns) {
    std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
    for (const auto& column : batch.columns()) columns.push_back(std::make_shared<arrow::ChunkedArray>(column));
    return ComputeFileStats(*batch.schema(), columns, batch.num_rows(), stats_columns);
  };
  auto in_parts = [](const std::shared_ptr<arrow::RecordBatch>& batch, std::int64_t part_rows,
                     int stats_columns) {
    FileStatsAccumulator stats(batch->schema(), stats_columns);
    for (std::int64_t at = 0; at < batch->num_rows(); at += part_rows) {
      auto part = batch->Slice(at, part_rows);
      std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
      for (const auto& column : part->columns()) columns.push_back(std::make_shared<arrow::ChunkedArray>(column));
      stats.Add(columns);
    }
    return stats.Json();
  };
  const std::string long_text(40, 'z');
  auto schema = arrow::schema({arrow::field("f", arrow::float64()), arrow::field("n", arrow::int32()),
                               arrow::field("s", arrow::utf8()), arrow::field("i", arrow::int64())});
  auto odd = arrow::RecordBatch::Make(
      schema, 5,
      {Column(arrow::float64(), {"2", "null", "NaN", "-1", "inf"}),
       Column(arrow::int32(), {"null", "null", "null", "null", "null"}),
       Column(arrow::utf8(), {"b", long_text, "null", "a", "c"}),
       Column(arrow::int64(), {"5", "-7", "null", "9", "0"})});
  for (const auto& batch : {EveryTypeBatch(), odd}) {
    for (std::int64_t part_rows : {1, 2, 3, 100}) {
      for (int stats_columns : {-1, 2, 32}) {
        EXPECT_EQ(in_parts(batch, part_rows, stats_columns), whole_stats(*batch, stats_columns))
            << "parts of " << part_rows << " rows, " << stats_columns << " columns";
      }
    }
  }
}

TEST(Stats, StringsAreTruncatedToBoundingPrefixes) {
  const std::string ascii40 = "abcdefghijklmnopqrstuvwxyz0123456789ABCD";
  EXPECT_EQ(TruncateMinString(ascii40, 32), ascii40.substr(0, 32));
  EXPECT_EQ(TruncateMaxString(ascii40, 32), ascii40.substr(0, 32) + "\x7F");
  EXPECT_EQ(TruncateMaxString("short", 32), "short");
  // The next character is above U+007F: only U+10FFFF bounds it.
  const std::string e_acute = "\xC3\xA9";
  const std::string accented = std::string(32, 'x') + e_acute + "yz";
  EXPECT_EQ(TruncateMaxString(accented, 32), std::string(32, 'x') + "\xF4\x8F\xBF\xBF");
  // Min counts characters, not bytes.
  std::string accented40;
  for (int i = 0; i < 40; ++i) accented40 += e_acute;
  EXPECT_EQ(TruncateMinString(accented40, 32).size(), 64u);
  // U+10FFFF at the cut cannot be beaten, so the prefix grows past it.
  const std::string max_char = "\xF4\x8F\xBF\xBF";
  const std::string with_max = std::string(32, 'a') + max_char + "b" + "cc";
  EXPECT_EQ(TruncateMaxString(with_max, 32), std::string(32, 'a') + max_char + "\x7F");
  // Only U+10FFFF characters past the prefix for twice its length: no bound.
  std::string all_max = std::string(32, 'a');
  for (int i = 0; i < 20; ++i) all_max += max_char;
  EXPECT_EQ(TruncateMaxString(all_max, 32), std::nullopt);
  // A character outside the BMP counts two (a Java surrogate pair) and is not split.
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600
  const std::string pairs = std::string(31, 'a') + emoji + "zz";
  EXPECT_EQ(TruncateMaxString(pairs, 32), std::string(31, 'a') + emoji + "\x7F");
}

TEST(Stats, ParsingKeepsNumbersExact) {
  auto stats = ParseFileStats(
      "{\"numRecords\":7,\"minValues\":{\"d\":12345678901234567890.1234567890,\"s\":\"a\\\"b\","
      "\"nested\":{\"x\":1}},\"maxValues\":{\"i\":9223372036854775807},\"nullCount\":{\"d\":2,"
      "\"nested\":{\"x\":0}},\"tightBounds\":true}");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->num_records, 7);
  EXPECT_EQ(stats->min_values.at("d"), "12345678901234567890.1234567890");
  EXPECT_EQ(stats->min_values.at("s"), "a\"b");
  EXPECT_EQ(stats->min_values.count("nested"), 0u);
  EXPECT_EQ(stats->max_values.at("i"), "9223372036854775807");
  EXPECT_EQ(stats->null_count.at("d"), 2);
  EXPECT_FALSE(ParseFileStats("not json"));
  EXPECT_FALSE(ParseFileStats("{\"numRecords\":"));
}

}  // namespace
}  // namespace mssql_cdc::delta
