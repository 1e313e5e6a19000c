#include "delta/parquet_file_reader.h"

#include <arrow/api.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/properties.h>

#include <algorithm>
#include <cctype>

#include "delta/data_file_io.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

std::unique_ptr<parquet::arrow::FileReader> OpenDataFile(storage::FileSystem& fs, const std::string& path,
                                                         bool use_threads) {
  parquet::ArrowReaderProperties properties;
  properties.set_use_threads(use_threads);
  properties.set_coerce_int96_timestamp_unit(arrow::TimeUnit::MICRO);
  parquet::arrow::FileReaderBuilder builder;
  ThrowIfError(builder.Open(fs.OpenInputFile(path)), "cannot open data file " + path);
  builder.properties(properties);
  auto reader = builder.Build();
  ThrowIfError(reader.status(), "cannot read data file " + path);
  return std::move(*reader);
}

int FindFileField(const arrow::Schema& file_schema, const std::string& name) {
  const int exact = file_schema.GetFieldIndex(name);
  if (exact >= 0) return exact;
  const auto same = [&](const std::string& other) {
    return other.size() == name.size() &&
           std::equal(other.begin(), other.end(), name.begin(), [](unsigned char x, unsigned char y) {
             return std::tolower(x) == std::tolower(y);
           });
  };
  for (int i = 0; i < file_schema.num_fields(); ++i) {
    if (same(file_schema.field(i)->name())) return i;
  }
  return -1;
}

void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>& leaves) {
  if (field.is_leaf()) leaves.push_back(field.column_index);
  for (const auto& child : field.children) CollectLeaves(child, leaves);
}

}  // namespace mssql_cdc::delta
