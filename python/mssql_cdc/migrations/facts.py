"""The ingestion facts table's migrations: the columns each added and the comments each
rewrote, in the order 0.8.0 took them; the columns, types and comments are the engine's."""

from __future__ import annotations

from mssql_cdc.migrations.base import (Migration, add_columns, adding, commenting,  # noqa: F401
                                       definition_columns, definition_comments, set_comments)

NETWORK_COLUMNS = definition_columns("facts", "source_rtt_ms", "read_seconds", "read_mb", "network_wait_ms")
RETENTION_COLUMNS = definition_columns("facts", "retention_watermark_ts", "retention_headroom_hours")
EVENT_COLUMNS = definition_columns("facts", "event", "lost_from_ts", "lost_to_ts")
LAG_COLUMNS = definition_columns("facts", "source_max_commit_ts", "capture_lag_seconds", "ingestion_lag_seconds")
END_COLUMNS = definition_columns("facts", "end_lsn", "end_commit_ts")
DETAIL_COLUMNS = definition_columns("facts", "detail")
SNAPSHOT_COMMENTS = definition_comments("facts", "detail", "event")
MODE_COMMENTS = definition_comments("facts", "detail", "event")
LOCK_COMMENTS = definition_comments("facts", "event")
SKIP_COMMENTS = definition_comments("facts", "detail", "event", "lost_from_ts", "lost_to_ts")
POSSIBLE_COMMENTS = definition_comments("facts", "detail", "event", "lost_from_ts")
WARNING_COMMENTS = definition_comments("facts", "detail")
KEY_VALUE_COMMENTS = definition_comments("facts", "detail")
SWITCH_COMMENTS = definition_comments("facts", "detail", "event")

MIGRATIONS = [
    Migration("network and read metrics", adding(NETWORK_COLUMNS)),
    Migration("retention headroom", adding(RETENTION_COLUMNS)),
    Migration("snapshot events", adding(EVENT_COLUMNS)),
    Migration("lag metrics", adding(LAG_COLUMNS)),
    Migration("end offset", adding(END_COLUMNS)),
    Migration("source change events", adding(DETAIL_COLUMNS)),
    Migration("chunked snapshot events", commenting(SNAPSHOT_COMMENTS)),
    Migration("snapshot plans and modes", commenting(MODE_COMMENTS)),
    Migration("full snapshot opens per run", commenting(LOCK_COMMENTS)),
    Migration("skipped changes", commenting(SKIP_COMMENTS)),
    Migration("possible skips", commenting(POSSIBLE_COMMENTS)),
    Migration("planning warnings", commenting(WARNING_COMMENTS)),
    Migration("key values in the plans table", commenting(KEY_VALUE_COMMENTS)),
    Migration("snapshots after a capture instance switch", commenting(SWITCH_COMMENTS)),
]
