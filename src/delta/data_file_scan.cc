#include "delta/data_file_scan.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/properties.h>

#include "core/errors.h"
#include "delta/column_mapping.h"
#include "delta/compute_kernels.h"
#include "delta/data_file_io.h"
#include "storage/file_system.h"
#include "delta/parquet_file_reader.h"

namespace mssql_cdc::delta {
namespace {

void ScanOneFile(storage::FileSystem& fs, const std::string& path,
                 const std::shared_ptr<arrow::Schema>& columns,
                 const std::function<void(const arrow::RecordBatch&)>& visit) {
  auto reader = OpenDataFile(fs, path, /*use_threads=*/false);
  std::shared_ptr<arrow::Schema> file_schema;
  ThrowIfError(reader->GetSchema(&file_schema), "cannot read the schema of data file " + path);

  // The asked columns are flat: one leaf each.
  const auto& manifest = reader->manifest();
  std::vector<int> file_field(columns->num_fields(), -1);
  std::vector<int> leaves;
  for (int c = 0; c < columns->num_fields(); ++c) {
    file_field[c] = FindFileField(*file_schema, PhysicalName(*columns->field(c)));
    if (file_field[c] >= 0) CollectLeaves(manifest.schema_fields[file_field[c]], leaves);
  }
  const int row_groups = reader->num_row_groups();
  for (int g = 0; g < row_groups; ++g) {
    const std::int64_t rows = reader->parquet_reader()->metadata()->RowGroup(g)->num_rows();
    std::shared_ptr<arrow::Table> stored;
    if (!leaves.empty()) {
      ThrowIfError(reader->ReadRowGroup(g, leaves, &stored), "cannot read data file " + path);
    }
    arrow::ArrayVector arrays;
    for (int c = 0; c < columns->num_fields(); ++c) {
      const auto& type = columns->field(c)->type();
      std::shared_ptr<arrow::Array> array;
      if (file_field[c] < 0) {
        auto nulls = arrow::MakeArrayOfNull(type, rows);
        ThrowIfError(nulls.status(), "cannot build NULLs for column " + columns->field(c)->name());
        array = *nulls;
      } else {
        // Columns come back in the file's order, whatever order they were asked in. One row
        // group comes back in one chunk, or a few for very long strings.
        const auto& chunks =
            stored->GetColumnByName(file_schema->field(file_field[c])->name())->chunks();
        if (chunks.size() == 1) {
          array = chunks.front();
        } else {
          auto concatenated = arrow::Concatenate(chunks);
          ThrowIfError(concatenated.status(), "cannot read data file " + path);
          array = *concatenated;
        }
        if (!array->type()->Equals(*type)) {
          auto cast = arrow::compute::Cast(*array, type);
          if (!cast.ok()) {
            throw SchemaChangedError("data file " + path + ": column " + columns->field(c)->name() +
                                     " holds " + array->type()->ToString() +
                                     ", which cannot be read as " + type->ToString());
          }
          array = *cast;
        }
      }
      arrays.push_back(std::move(array));
    }
    visit(*arrow::RecordBatch::Make(columns, rows, std::move(arrays)));
  }
}

}  // namespace

void ScanDataFiles(storage::FileSystem& fs, const std::string& table_root, const std::vector<AddFile>& files,
                   const std::shared_ptr<arrow::Schema>& columns,
                   const std::function<void(const arrow::RecordBatch&)>& visit) {
  EnsureComputeKernels();
  for (const auto& file : files) {
    ScanOneFile(fs, JoinPath(table_root, DataFileRelativePath(file.path)), columns, visit);
  }
}

}  // namespace mssql_cdc::delta
