// Opening a data file for reading, and finding a table's columns in it (internal to the delta
// component; data_files.h and data_file_scan.h build on it).
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <vector>
#include "storage/file_system.h"

namespace parquet::arrow {
class FileReader;
struct SchemaField;
}  // namespace parquet::arrow

namespace mssql_cdc::delta {

// A reader of the Parquet file at `path`; int96 timestamps (Spark's default) read as
// microseconds, since nanoseconds overflow past the year 2262. SourceError naming the file
// when it is missing or not Parquet.
std::unique_ptr<parquet::arrow::FileReader> OpenDataFile(storage::FileSystem& fs, const std::string& path,
                                                         bool use_threads);

// The file's top-level field for a table column: the same name, else the same name in
// another case (Delta column names are case-insensitive); -1 when the file lacks it.
int FindFileField(const arrow::Schema& file_schema, const std::string& name);

// The leaf column indices under `field`, for reading only some columns.
void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>& leaves);

}  // namespace mssql_cdc::delta
