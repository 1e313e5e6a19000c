// The output schema of change and snapshot reads (docs/reference/tables.md): six metadata
// columns first, then the captured columns under the engine's type mapping. Defined once here;
// the bronze table, the Spark source and every backend take it from this file.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string_view>
#include <vector>

#include "source/source.h"

namespace mssql_cdc {

// Names of the metadata columns, in order.
inline constexpr std::string_view kCaptureInstanceColumn = "_capture_instance";
inline constexpr std::string_view kStartLsnColumn = "_start_lsn";
inline constexpr std::string_view kSeqvalColumn = "_seqval";
inline constexpr std::string_view kOperationColumn = "_operation";
inline constexpr std::string_view kCommandIdColumn = "_command_id";
inline constexpr std::string_view kCommitTsColumn = "_commit_ts";

// Names of the columns bronze adds after them: the micro-batch that wrote a row (int32), the
// snapshot a row belongs to (its LSN) and its chunk in a chunked snapshot (int32).
inline constexpr std::string_view kBatchIdColumn = "_batch_id";
inline constexpr std::string_view kSnapshotColumn = "_snapshot";
inline constexpr std::string_view kChunkColumn = "_chunk";

// The names no source column may have: the metadata columns, then the columns bronze adds.
const std::vector<std::string_view>& ReservedColumnNames();
// True for a reserved name in any case.
bool IsReservedColumnName(std::string_view name);

// The six metadata fields (five without _command_id).
std::vector<std::shared_ptr<arrow::Field>> MetadataFields(bool include_command_id);

// Metadata fields then one nullable field per captured column, in the given order. Throws
// UnsupportedTypeError for an unmapped type and ConfigError for a reserved column name.
std::shared_ptr<arrow::Schema> OutputSchema(const std::vector<CapturedColumn>& columns,
                                            bool include_command_id);
// The same with the captured columns' fields given (the `columns` option's types).
std::shared_ptr<arrow::Schema> OutputSchema(const arrow::FieldVector& captured,
                                            bool include_command_id);

}  // namespace mssql_cdc
