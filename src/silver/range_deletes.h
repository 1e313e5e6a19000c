// The waves' range deletes of the native engine (silver/wave_ranges.h for the rule): the
// delete rows a silver call ranks with bronze's rows, so that the rule of the latest image
// decides between a range delete and a change to the same key as it decides between changes.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "delta/table.h"
#include "silver/wave_ranges.h"

namespace mssql_cdc {

// One delete row (operation 1, _start_lsn the range's stamp, NULL seqval and command id, so
// that it ranks after any change of that LSN, as the chunk's rows do) for each key of `silver`
// inside a range whose silver row is older than the range's stamp and which no row of the
// chunks among `plan_rows` (the bronze rows the call applies) holds. In `plan_rows`' schema.
// Only the silver files whose key statistics meet a range are read, and of them only the key
// and _start_lsn.
std::shared_ptr<arrow::Table> RangeDeleteRows(const delta::DeltaTable& silver, const WaveRanges& ranges,
                                              const arrow::Table& plan_rows);

}  // namespace mssql_cdc
