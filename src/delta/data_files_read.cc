// ReadDataFiles: Parquet data files into one Arrow table in the table's schema.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/properties.h>

#include <algorithm>
#include <cctype>

#include "core/errors.h"
#include "delta/column_mapping.h"
#include "delta/compute_kernels.h"
#include "delta/data_file_io.h"
#include "delta/data_files.h"
#include "delta/file_stats.h"
#include "delta/parquet_file_reader.h"
#include "storage/file_system.h"
#include "delta/row_filter.h"

namespace mssql_cdc::delta {
namespace {

// One file in the table's schema.
std::shared_ptr<arrow::Table> ReadOneFile(storage::FileSystem& fs, const std::string& path,
                                          const std::shared_ptr<arrow::Schema>& table_schema) {
  auto reader = OpenDataFile(fs, path, /*use_threads=*/true);
  std::shared_ptr<arrow::Schema> file_schema;
  ThrowIfError(reader->GetSchema(&file_schema), "cannot read the schema of data file " + path);
  const auto& manifest = reader->manifest();
  std::vector<int> file_field_of_column(table_schema->num_fields(), -1);
  std::vector<int> file_fields;  // in file order: ReadTable returns them so
  for (int c = 0; c < table_schema->num_fields(); ++c) {
    file_field_of_column[c] = FindFileField(*file_schema, PhysicalName(*table_schema->field(c)));
    if (file_field_of_column[c] >= 0) file_fields.push_back(file_field_of_column[c]);
  }
  std::sort(file_fields.begin(), file_fields.end());
  file_fields.erase(std::unique(file_fields.begin(), file_fields.end()), file_fields.end());
  std::vector<int> leaves;
  for (int f : file_fields) CollectLeaves(manifest.schema_fields[f], leaves);

  const std::int64_t num_rows = reader->parquet_reader()->metadata()->num_rows();
  std::shared_ptr<arrow::Table> stored;
  if (!leaves.empty()) ThrowIfError(reader->ReadTable(leaves, &stored), "cannot read data file " + path);

  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  for (int c = 0; c < table_schema->num_fields(); ++c) {
    const auto& type = table_schema->field(c)->type();
    if (file_field_of_column[c] < 0) {
      auto nulls = arrow::MakeArrayOfNull(type, num_rows);
      ThrowIfError(nulls.status(), "cannot build NULLs for column " + table_schema->field(c)->name());
      columns.push_back(std::make_shared<arrow::ChunkedArray>(arrow::ArrayVector{*nulls}, type));
      continue;
    }
    const auto position = std::find(file_fields.begin(), file_fields.end(), file_field_of_column[c]) -
                          file_fields.begin();
    auto column = stored->column(static_cast<int>(position));
    if (!column->type()->Equals(*type)) {
      auto cast = arrow::compute::Cast(column, type);
      if (!cast.ok())
        throw SchemaChangedError("data file " + path + ": column " + table_schema->field(c)->name() +
                                 " holds " + column->type()->ToString() + ", which cannot be read as " +
                                 type->ToString() + ": " + cast.status().ToString());
      column = cast->chunked_array();
    }
    columns.push_back(std::move(column));
  }
  return arrow::Table::Make(table_schema, std::move(columns), num_rows);
}

}  // namespace

std::shared_ptr<arrow::Table> ReadDataFiles(storage::FileSystem& fs, const std::string& table_root,
                                            const std::vector<AddFile>& files,
                                            const std::shared_ptr<arrow::Schema>& table_schema,
                                            const std::vector<FilterTerm>& filter) {
  EnsureComputeKernels();
  const auto bound = BindFilter(*table_schema, filter);
  std::vector<std::shared_ptr<arrow::Table>> tables;
  for (const auto& file : files) {
    if (!bound.empty() && file.stats) {
      if (auto stats = ParseFileStats(*file.stats); stats && StatsExcludeFile(*stats, bound)) continue;
    }
    const std::string path = JoinPath(table_root, DataFileRelativePath(file.path));
    tables.push_back(ApplyFilter(ReadOneFile(fs, path, table_schema), bound));
  }
  if (tables.empty()) {
    auto empty = arrow::Table::MakeEmpty(table_schema);
    ThrowIfError(empty.status(), "cannot make an empty table");
    return *empty;
  }
  auto table = arrow::ConcatenateTables(tables);
  ThrowIfError(table.status(), "cannot combine the data files of " + table_root);
  return *table;
}

}  // namespace mssql_cdc::delta
