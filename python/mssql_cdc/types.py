"""The types of the public API. At run time they are plain values: strings for the Literals, dicts
for the TypedDicts; their keys are only ever added.

``SparkSessionLike`` and ``StreamingQueryLike`` stand for a classic or a Spark Connect session and
query, which the API accepts alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union

SnapshotMode = Literal["full", "chunked"]
OnDataLoss = Literal["fail", "resnapshot"]
Isolation = Literal["snapshot", "readCommitted"]
Granularity = Literal["minute", "hour", "day"]


class Offset(TypedDict):
    """Where a batch starts or ends: ``lsn`` (0x + 20 uppercase hex) and ``commit_ts`` (its commit
    time, UTC, ISO-8601 to the millisecond; "" when unknown)."""

    lsn: str
    commit_ts: str


# Every source option (docs/reference/options.md), values as strings. tests/python checks the
# names against the engine's list.
SourceOptions = TypedDict("SourceOptions", {
    "captureInstance": str, "connectionString": str, "user": str, "password": str, "accessToken": str,
    "backend": str,
    "sourceTimeZone": str, "connectTimeout": str, "lockTimeoutMs": str, "startingLsn": str,
    "maxCommitsPerBatch": str, "numPartitions": str, "failOnDataLoss": str, "includeCommandId": str,
    "columns": str, "arrowBatchSize": str, "metricsPath": str, "schemaChangePolicy": str,
    "isolationLevel": str, "snapshotChunks": str, "snapshotKeys": str, "snapshotLsn": str,
    "fakePath": str, "simPath": str, "changeReader": str,
}, total=False)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession as _ClassicSession
    from pyspark.sql.connect.session import SparkSession as _ConnectSession
    from pyspark.sql.connect.streaming.query import StreamingQuery as _ConnectQuery
    from pyspark.sql.streaming import StreamingQuery as _ClassicQuery

    SparkSessionLike = Union[_ClassicSession, _ConnectSession]
    StreamingQueryLike = Union[_ClassicQuery, _ConnectQuery]
else:
    SparkSessionLike = Any
    StreamingQueryLike = Any



class ReconcileResult(TypedDict):
    """What one ``reconcile`` run found: the silver version and LSN compared, the source's max
    LSN, how many buckets matched, were in flight or did not match, how many were compared row
    by row, failing keys per failure type, and the report rows as a DataFrame."""

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
    report: Any


class ApplyResult(TypedDict):
    """What one ``apply_changes`` call did: whether it rebuilt silver from a snapshot, the highest
    bronze LSN silver holds now, silver's verdict (naive UTC) and whether bronze existed."""

    rebuilt: bool
    applied_lsn: str | None
    finalized_until: datetime | None
    bronze_found: bool
