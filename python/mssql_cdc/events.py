"""The kinds of facts rows other than micro-batches: the values of the ingestion facts table's
``event`` column (docs/reference/tables.md), as the engine names them (core/facts_events.h)."""

from __future__ import annotations

from mssql_cdc import _core
from mssql_cdc.facts_rows import read, write_event  # noqa: F401 (exported here, as in the reference)

(BOOTSTRAP, RESNAPSHOT, SNAPSHOT_OPEN, SNAPSHOT_PLAN, SNAPSHOT_CHUNK, SCHEMA_CHANGE, CAPTURE_INSTANCE_SWITCHED,
 DATA_SKIPPED) = _core.facts_events()
# The events that complete a snapshot.
SNAPSHOTS = (BOOTSTRAP, RESNAPSHOT)

# The plans table beside a bronze table, as the engine defines it: columns as (name, Spark SQL
# type, comment), and its comment.
PLANS_COLUMNS, PLANS_COMMENT = _core.table_definition("plans")


def plans_table(target: str) -> str:
    """The plans table beside bronze `target`: its name or path with _snapshot_plans appended."""
    from mssql_cdc import backfill, tables

    return backfill.plans_table(tables.TableArg(target, "target")).text
