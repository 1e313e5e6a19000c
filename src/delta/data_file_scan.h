// Some columns of a table's data files, read a row group at a time.
//
// ScanDataFiles hands `visit` the rows of `files` in file order, one record batch per row
// group at most, holding only the columns asked for and one row group of them in memory: for
// callers that fold a big table's rows (counts, ranges) instead of keeping them. Columns are
// found by name (ignoring case, as Delta does) and read in the types of `columns`; a column a
// file lacks reads as NULL.
#pragma once

#include <arrow/type_fwd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

// Throws SourceError naming the file when one is missing or not Parquet, SchemaChangedError
// when a stored column cannot be read in the asked type.
void ScanDataFiles(storage::FileSystem& fs, const std::string& table_root, const std::vector<AddFile>& files,
                   const std::shared_ptr<arrow::Schema>& columns,
                   const std::function<void(const arrow::RecordBatch&)>& visit);

}  // namespace mssql_cdc::delta
