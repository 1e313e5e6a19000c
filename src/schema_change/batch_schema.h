// What the schema of a table does inside one batch's range (after, through]: which capture
// instance serves which piece of it, the DDL recorded in it, the newer instances taking over,
// and whether the columns the stream reads with still hold what it will read
// (docs/schema-changes.md). Both modes ask it at every planning; each decides what to do when
// the columns no longer hold (a native stream evolves in place, Spark stops at the change).
#pragma once

#include <arrow/type_fwd.h>

#include <string>
#include <vector>

#include "core/facts_events.h"
#include "core/lsn.h"
#include "core/source_options.h"
#include "core/time.h"
#include "plan/planner.h"
#include "schema_change/ddl_kind.h"
#include "schema_change/table_instances.h"
#include "source/source.h"

namespace mssql_cdc {

// A facts event the batch writes beside its micro-batch row.
struct SchemaEvent {
  std::string event;  // facts_event::kSchemaChange or facts_event::kCaptureInstanceSwitched
  Lsn lsn;            // the DDL's LSN, or the newer instance's start LSN
  std::string detail;
  // The instance a switch goes to, or the one a DDL was recorded in.
  std::string capture_instance;
  std::optional<UtcMicros> commit_ts;  // of `lsn`, filled by a caller with a clock
};

struct BatchSchemaRules {
  arrow::FieldVector reads;           // the captured columns the stream reads with
  bool columns_given = false;         // by the `columns` option: a switch leaves out the rest
  SchemaChangePolicy policy = SchemaChangePolicy::kClassify;
};

struct BatchSchema {
  std::vector<InstanceSegment> segments;  // the range cut where a newer instance takes over
  std::vector<InstanceSwitch> switches;
  std::vector<SchemaEvent> events;        // in LSN order
  std::vector<std::string> warnings;
  // Columns the range holds that `reads` cannot hold: a newer instance's columns the stream
  // lacks (unless columns_given), or types a DDL widened past what the stream reads with.
  std::vector<CapturedColumn> not_held;
  // Where they are met: "capture instance 'x' (from LSN S)" or "a type change at LSN L".
  std::string not_held_at;
};

// The SchemaChangedError of a batch whose columns do not hold what it meets (not_held set),
// for a reader that cannot change its columns while it runs (Spark's query): it names what was
// met and where, and that a restart reads with the new columns.
[[noreturn]] void ThrowNotHeld(const BatchSchema& schema, const std::string& table);

// Reads the DDL history and captured columns of the instances serving [after + 1, through].
// Throws SchemaChangedError, before anything is read, when policy is fail and the range holds
// DDL.
BatchSchema ReadBatchSchema(Source& source, const TableInstances& instances,
                            const BatchSchemaRules& rules, const Lsn& after, const Lsn& through);

// The columns a stream of the table reads when it infers them: UnionOfInstances over every
// instance of `instances`, oldest first (table_columns.h).
std::vector<CapturedColumn> InferTableColumns(Source& source, const TableInstances& instances);

// What a stream reads with: the captured columns (for snapshots and reads by name) and the
// output schema's fields of them.
struct StreamColumns {
  std::vector<CapturedColumn> captured;
  arrow::FieldVector fields;
  bool listed = false;  // by the `columns` option
};
// The `columns` option's list when given (SelectListedColumns), else InferTableColumns.
StreamColumns ResolveStreamColumns(Source& source, const TableInstances& instances,
                                   const std::optional<std::string>& columns_option);

// The commit-aligned ranges a batch reads (plan/planner.h's Split), each segment of
// `segments` split on its own instance from `from` on (a segment wholly before it is skipped).
std::vector<LsnRange> SplitSegments(Source& source, const std::vector<InstanceSegment>& segments,
                                    const Lsn& from, int max_partitions);

// The LSN a batch may not plan past while an instance of the table waits for the capture
// process: the last commit before the earliest pending enable (reading past it would read
// from the older instance changes the newer one serves). nullopt when none is pending; the
// zero LSN when no commit precedes it.
std::optional<Lsn> PendingEnableLimit(Source& source, const TableInstances& instances);

}  // namespace mssql_cdc
