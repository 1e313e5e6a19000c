// The engine's own reader of change rows (decision 0008): the ChangeRows statement of
// statements.h sent by sp_executesql over a TDS connection of its own (tds/client_connection.h),
// and its reply decoded straight into Arrow (wire_columns.h), with no ODBC driver in between.
// Its batches are the driver reader's (change_reader.h), value for value.
//
// It reads where a SQL Server login with a password over TCP reaches the server, encrypted as
// Driver 18 would encrypt it (tds_login.h, decision 0020). Given a fallback, a failure saying
// it cannot read there (the server requires encryption a FreeTDS connection does not have,
// refuses its login, a column comes in a type or collation it does not decode, a reply it does
// not understand) before its first batch hands the read to the fallback, the driver's reader
// of the same plan, and reports why through `on_fallback`. A certificate it refuses, or a
// server without the encryption the connection requires, is the ConfigError the driver path
// gives, never a fallback: the driver would refuse it too. Errors of the statement itself (a
// missing grant, a purged range) are the engine's errors, as the driver reader makes them;
// transient failures are retried as the RetryPolicy says, on a new connection, skipping the
// rows already delivered after checking that the last of them comes back in the same place.
#pragma once

#include <arrow/record_batch.h>

#include <functional>
#include <memory>
#include <string>

#include "core/timezone.h"
#include "source/odbc/change_reader.h"
#include "source/odbc/connection_slot.h"
#include "source/odbc/retry_policy.h"
#include "tds/client_connection.h"

namespace mssql_cdc::odbc {

using TdsConnectionSlot = IdleSlot<tds::ClientConnection>;

// What a TDS reader needs of the Source that made it; shared, so a reader may outlive it.
struct TdsReaderSettings {
  tds::ClientLogin login;  // holds the password
  std::string server;              // the Server value, for messages
  std::string encryption_setting;  // what asked for encryption ("Encrypt=yes"), for messages
  RetryPolicy retry;
  std::shared_ptr<TdsConnectionSlot> slot;  // the Source's idle TDS connection
};

struct TdsFallback {
  // Makes the driver's reader of the same plan; null: no fallback, failures are errors.
  std::function<std::unique_ptr<arrow::RecordBatchReader>()> make_reader;
  // Told why, once, when the read falls back: `every_read` when the cause is the connection
  // (any read of this Source would fail the same way), not this capture instance's columns.
  std::function<void(const std::string& reason, bool every_read)> on_fallback;
};

// Throws ConfigError as MakeChangeReader does; connects on the first ReadNext.
std::unique_ptr<arrow::RecordBatchReader> MakeTdsChangeReader(
    std::shared_ptr<const TdsReaderSettings> settings, const ChangeReadPlan& plan,
    const SourceClock& clock, TdsFallback fallback);

}  // namespace mssql_cdc::odbc
