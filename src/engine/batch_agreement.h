// Invariant 8, its checking half: before a batch appends, the checkpoint that planned it and
// the tables it writes must agree about what is already written under its app id. When they
// disagree (another writer, a restored backup, a checkpoint directory copied from another run)
// the stream stops with a ConfigError that says what differs and how to recover, instead of
// trusting either side; nothing of the batch is written.
//
// Native streams compare with bronze: its txn version for the app id must be the checkpoint's
// (RecoveryPoint::bronze_txn), or the batch's own id when the batch landed before a crash, and
// the range the bronze commit recorded (userMetadata start_lsn and end_lsn; commits written
// before those keys existed only bound their rows by min_lsn and max_lsn) must be the
// checkpoint's range of that batch. Spark mode, whose checkpoint is Spark's, compares with the
// facts table's micro-batch rows (docs/spark.md: a checkpoint deleted or rewound
// under the same app_id fails the batch).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/lsn.h"

namespace mssql_cdc {

namespace delta {
class DeltaTable;
}
class StreamCheckpoint;
struct BatchOffsets;

// What differs between the range a bronze commit's userMetadata recorded and (start, end];
// nullopt when they agree or the metadata records neither a range nor row bounds.
std::optional<std::string> RecordedRangeDiffers(const std::string& user_metadata,
                                                const Lsn& start, const Lsn& end);

struct BronzeCheck {
  const std::string& app_id;
  const std::string& checkpoint;  // the directory, for messages
  std::int64_t expected_txn;      // RecoveryPoint::bronze_txn, kept current by the stream
  // Compare the range of bronze's newest batch with the checkpoint's too: once per run, since
  // the lock keeps other writers out after that.
  bool verify_newest_range;
};

// Catches bronze up and checks it against the checkpoint before `batch` appends. True when
// bronze already holds `batch` with the same range (a replay whose append landed before the
// crash); false when the batch is still to append. Throws ConfigError on any disagreement.
bool CheckBronzeAgrees(delta::DeltaTable& bronze, const StreamCheckpoint& checkpoint,
                       const BronzeCheck& check, const BatchOffsets& batch);

// After an append of `batch` that wrote nothing because bronze held its txn already: the
// commit holding it must have recorded the same range. Throws ConfigError otherwise.
void CheckHeldBatchAgrees(const delta::DeltaTable& bronze, const BronzeCheck& check,
                          const BatchOffsets& batch);

// One micro-batch row of the facts table (event NULL) of an app id.
struct FactsBatchRow {
  std::int64_t batch_id = 0;
  std::optional<std::string> end_lsn;
};

// Spark mode: the facts rows `recorded` of the sink's app id (those with batch ids from
// batch_id - 1 on are enough) against batch `batch_id` Spark is about to write, reading
// (start, end] when the planner told the sink its range. Throws ConfigError when the facts
// hold a later batch (the checkpoint was rewound or deleted), this batch with another end, or
// a previous batch that ended elsewhere than this one starts.
void CheckFactsAgree(const std::vector<FactsBatchRow>& recorded, const std::string& app_id,
                     const std::string& facts_table, std::int64_t batch_id,
                     const std::optional<Lsn>& start, const std::optional<Lsn>& end);

// A stream that starts afresh (no batch in its checkpoint, from the earliest change, no
// bootstrap) into a bronze table that holds micro-batches of other streams would read their
// changes again: ConfigError naming them and the ways on, before anything is written.
// `app_versions` is bronze's latest txn version per app id; the stream's own ids (`app_id`,
// its generations `app_id.g<n>`, and the ids with '#' that snapshots and events commit under)
// are not other streams.
void CheckFreshStartOnBronze(const std::map<std::string, std::int64_t>& app_versions,
                             const std::string& app_id, const std::string& bronze);

}  // namespace mssql_cdc
