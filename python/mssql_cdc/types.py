"""The types of the public API. At run time they are plain values: strings for the Literals, dicts
for the TypedDicts; their keys are only ever added.

``SparkSessionLike`` and ``StreamingQueryLike`` stand for a classic or a Spark Connect session and
query, which the API accepts alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict

SnapshotMode = Literal["full", "chunked"]
OnDataLoss = Literal["fail", "resnapshot"]
Isolation = Literal["snapshot", "readCommitted"]
Granularity = Literal["minute", "hour", "day"]
# Where a chunked snapshot's backfill() stands (BackfillStatus["state"]).
BackfillState = Literal["done", "running", "waiting_headroom", "waiting_metrics", "no_snapshot"]


class Offset(TypedDict):
    """Where a batch starts or ends: ``lsn`` (0x + 20 uppercase hex) and ``commit_ts`` (its commit
    time, UTC, ISO-8601 to the millisecond; "" when unknown)."""

    lsn: str
    commit_ts: str


# Every source option (docs/reference/options.md), values as strings. tests/python checks the
# names against the engine's list.
SourceOptions = TypedDict("SourceOptions", {
    "captureInstance": str, "connectionString": str, "user": str, "password": str, "accessToken": str,
    "tokenProvider": str,
    "backend": str,
    "sourceTimeZone": str, "connectTimeout": str, "lockTimeoutMs": str, "startingLsn": str,
    "maxCommitsPerBatch": str, "numPartitions": str, "failOnDataLoss": str, "includeCommandId": str,
    "columns": str, "arrowBatchSize": str, "metricsPath": str, "schemaChangePolicy": str,
    "isolationLevel": str, "snapshotChunks": str, "snapshotKeys": str, "snapshotLsn": str,
    "fakePath": str, "simPath": str, "changeReader": str,
}, total=False)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession
    from pyspark.sql.connect.streaming.query import StreamingQuery as ConnectStreamingQuery
    from pyspark.sql.streaming import StreamingQuery

# A classic or a Spark Connect session or query. Type aliases written as strings, so that they
# cost no PySpark import at run time (the reference library's are the same strings).
SparkSessionLike: TypeAlias = "SparkSession | ConnectSparkSession"
StreamingQueryLike: TypeAlias = "StreamingQuery | ConnectStreamingQuery"


class BackfillStatus(TypedDict):
    """What one ``CdcStream.backfill`` call left: the snapshot's LSN (None before one is open),
    chunks read and planned (None before the plan), whether it is done or paused and why, and
    the rows read so far (not in the reference library's)."""

    snapshot: str | None
    chunks_done: int
    chunks_total: int | None
    done: bool
    paused: bool
    state: BackfillState
    reason: str | None
    rows: int


class Freshness(TypedDict):
    """One table's verdict and how old it is (``finalization.freshness``): the verdict and when it
    was last written (naive UTC), their ages in seconds at the call, and the chunked snapshot
    still open on the table, if any."""

    table_name: str
    finalized_until: datetime | None
    updated_at: datetime | None
    age_seconds: float | None
    seconds_since_update: float | None
    open_snapshot_lsn: str | None



class ReconcileResult(TypedDict):
    """What one ``reconcile`` run found: the silver version and LSN compared, the source's max
    LSN, how many buckets matched, were in flight or did not match, how many were compared row
    by row, failing keys per failure type, the keys with changes in flight left out of the row
    comparison, and the report rows as a DataFrame."""

    run_id: str
    silver_version: int
    silver_lsn: str | None
    source_lsn: str
    buckets: int
    match: int
    in_flight: int
    mismatch: int
    hashed: int
    failures: dict[str, int]
    keys_in_flight: list[dict[str, Any]]
    report: DataFrame


class ApplyResult(TypedDict):
    """What one ``apply_changes`` call did: whether it rebuilt silver from a snapshot, the highest
    bronze LSN silver holds now, silver's verdict (naive UTC) and whether bronze existed."""

    rebuilt: bool
    applied_lsn: str | None
    finalized_until: datetime | None
    bronze_found: bool
