// Spark mode's executor side (decision 0004): one commit-aligned range of a batch, as a
// ChangeFeed planned it, read through a Source of its own.
//
// The reader gives the change rows of [from, to] in the output schema exactly (the schema
// Spark is told), in record batches of at most arrowBatchSize rows, commit times converted
// to UTC by the source clock as in a native stream's read. After its last batch it checks
// retention again (invariant 4 of docs/invariants.md): when cleanup passed `from` while the range was read, the
// change table may have silently returned less than the range held, so with failOnDataLoss
// the next read fails with DataLossError instead of ending. Failures come back from ReadNext
// as a Status carrying the Error (core/arrow_status.h).
//
// The reader measures its read for the batch's facts row (batch_measures.h): one round trip
// before reading, rows, the source's Arrow bytes and seconds; the batch's last range, asked
// with `measure_end`, also measures the batch's end after the retention re-check.
#pragma once

#include <arrow/record_batch.h>

#include <memory>
#include <string>

#include "core/lsn.h"
#include "core/source_options.h"
#include "engine/batch_measures.h"
#include "source/open_source.h"

namespace mssql_cdc {

class FeedRangeReader : public arrow::RecordBatchReader {
 public:
  // What the read measured; complete once ReadNext has returned the end.
  virtual const RangeMeasures& measures() const = 0;
};

// Which change table a range is read from, and in which schema.
struct FeedRangeShape {
  // The capture instance serving the range (LsnRange::capture_instance); empty: the one the
  // options name.
  std::string capture_instance;
  // The output schema the query was told: columns the instance lacks read NULL, narrower
  // types are cast up. Null: the union of the table's instances' columns, as ChangeFeed infers.
  std::shared_ptr<arrow::Schema> schema;
};

// Opens the source through `factory` (MakeSourceFactory(options) when null), resolves the
// capture instance and the clock, and starts the read. Throws what ChangeFeed's constructor
// throws, and the request errors of Source::ReadChanges.
std::unique_ptr<FeedRangeReader> ReadFeedRange(const SourceOptions& options, const Lsn& from,
                                               const Lsn& to, bool measure_end = false,
                                               SourceFactory factory = nullptr,
                                               const FeedRangeShape& shape = {});

}  // namespace mssql_cdc
