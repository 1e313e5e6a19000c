// Transactions kept to commit just before the next snapshot read of the database: what a
// writer that commits between a snapshot's stamp (its max LSN) and its SELECT looks like, for
// tests of the snapshot rules (mssql_cdc.fake's commit_before_read). The queue lives in the
// file (sim_meta), so the reader that claims it may be another process; the first snapshot
// read to start claims the whole queue and commits it, in order, before it reads.
#pragma once

#include <optional>
#include <vector>

#include "core/time.h"
#include "sim/database.h"
#include "sim/schema.h"
#include "sim/sqlite.h"
#include "sim/value.h"

namespace mssql_cdc::sim {

// A change as Transaction::LogChange takes it.
struct LoggedChange {
  int operation = 0;
  Row image;
};

// Queues one transaction of `changes` to `table`, committed at `at` (UTC; the machine's time
// when it commits if absent). The changes are checked when they commit, not here.
void QueueBeforeSnapshotRead(SimDatabase& db, const TableName& table, const std::vector<LoggedChange>& changes,
                             std::optional<UtcMicros> at);

// Whether anything is queued, read on any connection to the file (a reader's too).
bool HasQueuedBeforeSnapshotRead(SqliteDb& db);

// Claims the queue and commits its transactions in order; returns how many committed.
int CommitQueuedBeforeSnapshotRead(SimDatabase& db);

}  // namespace mssql_cdc::sim
