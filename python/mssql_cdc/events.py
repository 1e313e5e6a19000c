"""The kinds of facts rows other than micro-batches: the values of the ingestion facts table's
``event`` column (docs/reference/tables.md), as the engine names them (core/facts_events.h)."""

from __future__ import annotations

from mssql_cdc import _core

(BOOTSTRAP, RESNAPSHOT, SNAPSHOT_OPEN, SNAPSHOT_PLAN, SNAPSHOT_CHUNK, SCHEMA_CHANGE, CAPTURE_INSTANCE_SWITCHED,
 DATA_SKIPPED) = _core.facts_events()
# The events that complete a snapshot.
SNAPSHOTS = (BOOTSTRAP, RESNAPSHOT)

# The plans table beside a bronze table, as the engine defines it: columns as (name, Spark SQL
# type, comment), and its comment.
PLANS_COLUMNS, PLANS_COMMENT = _core.table_definition("plans")
