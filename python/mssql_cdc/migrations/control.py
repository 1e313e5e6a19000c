"""The control table's migrations, in the order 0.8.0 took them; the columns, types and
comments are the engine's."""

from __future__ import annotations

from mssql_cdc.migrations.base import (Migration, add_columns, adding, commenting,  # noqa: F401
                                       definition_columns, definition_comments, set_comments)

APPLIED_COLUMNS = definition_columns("control", "applied_lsn", "snapshot_lsn")
WAVE_COLUMNS = definition_columns("control", "open_snapshot_lsn", "snapshot_wave")
OPEN_COMMENTS = definition_comments("control", "open_snapshot_lsn")
VERDICT_COMMENTS = definition_comments("control", "finalized_until")

MIGRATIONS = [
    Migration("add applied_lsn and snapshot_lsn", adding(APPLIED_COLUMNS)),
    Migration("add open_snapshot_lsn and snapshot_wave", adding(WAVE_COLUMNS)),
    Migration("open re-snapshots too", commenting(OPEN_COMMENTS)),
    Migration("the verdict over a loss gap", commenting(VERDICT_COMMENTS)),
]
