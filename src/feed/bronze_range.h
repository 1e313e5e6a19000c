// Spark mode's bronze route (decision 0019): a Spark task reads one commit-aligned range of a
// batch and writes its rows into bronze's data files itself, with the engine's Delta writer,
// so that the change rows never pass through the JVM; the sink then names the files of all
// the batch's ranges in one bronze commit carrying the batch's txn.
//
// A range's files are uncommitted until that commit: a task retried, a batch replayed or a
// query killed leaves files no commit names, which readers never see and VACUUM deletes.
// The commit refuses files written in a schema other than the one bronze has when it commits
// (another writer changed it meanwhile), deleting them, so that Spark runs the batch again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/source_options.h"
#include "delta/actions.h"
#include "delta/table_options.h"
#include "engine/batch_measures.h"
#include "engine/batch_reader.h"
#include "feed/feed_range.h"

namespace mssql_cdc {

// What a task hands the sink for one range: its files, what its rows hold, what it measured.
struct BronzeRangeFiles {
  std::vector<delta::AddFile> files;  // none committed; none when the range held no row
  std::string schema;                 // the Delta schema string the files were written in
  RowStats stats;
  RangeMeasures measures;

  std::string ToJson() const;
  // ConfigError naming `what` when `text` is not what ToJson writes.
  static BronzeRangeFiles FromJson(const std::string& text, const std::string& what);
};

struct BronzeRangeRequest {
  std::string bronze_uri;
  std::int64_t batch_id = 0;  // the _batch_id of every row
  std::size_t part = 0;       // numbers the files (part-<part>-...)
};

// Reads [from, to] as ReadFeedRange does and writes the rows, aligned to bronze's schema as a
// native batch writes them, into new data files of the table at request.bronze_uri. A failure
// deletes the files the read had written.
BronzeRangeFiles WriteRangeToBronze(const SourceOptions& options, const Lsn& from, const Lsn& to,
                                    bool measure_end, const FeedRangeShape& shape,
                                    const BronzeRangeRequest& request);

// The rows of every range, summed.
RowStats SumRowStats(const std::vector<BronzeRangeFiles>& ranges);

// Names every range's files in one commit of the table at `bronze_uri`, with `txn` and
// `user_metadata`: written=false, the files deleted, when the table already holds the txn.
// ConcurrentModificationError, the files deleted, when they were written in another schema
// than the one the table takes now.
delta::CommitResult CommitBronzeRanges(const std::string& bronze_uri,
                                       const std::vector<BronzeRangeFiles>& ranges,
                                       const delta::Txn& txn, const std::string& user_metadata);

}  // namespace mssql_cdc
