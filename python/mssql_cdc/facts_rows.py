"""The reference library's readers and writers of facts rows and bronze rows (``sink`` and
``events`` export them), over the engine's definitions: facts rows are built by the engine
(``_core.event_facts``) or checked against its facts columns, and a batch's counts are the
engine's aggregate expressions. The streams themselves write through ``sink.delta_sink``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from mssql_cdc import _core, tables
from mssql_cdc._glue import utc_micros
from mssql_cdc.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row

    from mssql_cdc.tables import ColumnDef
    from mssql_cdc.types import SparkSessionLike


def _facts_struct() -> StructType:
    return StructType.fromJson(json.loads(_core.facts_schema_json()))


def _append_facts(spark: SparkSessionLike, facts_table: str, frame: DataFrame, txn_app_id: str | None,
                  version: int) -> None:
    table = tables.TableArg(facts_table, "facts_table")
    tables.ensure(spark, table, "facts")
    if txn_app_id is None:
        tables.append(frame, table)
    else:
        tables.append(frame, table, txn_app_id=txn_app_id, txn_version=int(version))


def write_facts(spark: SparkSessionLike, facts_table: str, rows: list[dict[str, Any]], txn_app_id: str | None,
                version: int) -> None:
    """Appends `rows` (dicts of facts columns; a column left out is NULL) to the facts table,
    created or migrated first; with `txn_app_id`, once per (txn_app_id, version), as Delta skips
    a txn it already holds. ConfigError (a ValueError) naming any key that is not a facts column,
    before anything is written."""
    struct = _facts_struct()
    names = struct.fieldNames()
    unknown = sorted({key for row in rows for key in row} - set(names))
    if unknown:
        raise ConfigError(f"unknown facts columns: {unknown}; the facts columns are {names}")
    frame = spark.createDataFrame([tuple(row.get(name) for name in names) for row in rows], schema=struct)
    _append_facts(spark, facts_table, frame, txn_app_id, version)


def _micros_of(value: datetime | str | None, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ConfigError(f"{what}={value!r} is not an ISO time such as '2026-12-06T12:00:00'") from None
    return utc_micros(value, what)


def write_event(spark: SparkSessionLike, facts_table: str, event: str, *, app_id: str, txn_app_id: str | None,
                version: int, target: str, lsn: str, commit_ts: str, rows: int | None = None,
                started_at: datetime | None = None, duration_ms: int | None = None,
                lost_from_ts: datetime | None = None, lost_to_ts: datetime | None = None,
                detail: str | None = None) -> None:
    """Appends one event row (a snapshot, a schema change, ...) to the facts table, as the
    engine builds it: min_lsn = max_lsn = end_lsn = `lsn`, its commit times `commit_ts` (naive
    UTC, ISO text or datetime), no batch id; with `txn_app_id`, once per (txn_app_id, version)."""
    commit_us = _micros_of(commit_ts, "commit_ts")
    batch = _core.event_facts(
        app_id, target, event, detail, rows=rows, min_lsn=lsn, max_lsn=lsn, min_commit_ts_us=commit_us,
        max_commit_ts_us=commit_us, lost_from_ts_us=_micros_of(lost_from_ts, "lost_from_ts"),
        lost_to_ts_us=_micros_of(lost_to_ts, "lost_to_ts"), started_at_us=_micros_of(started_at, "started_at"),
        duration_ms=duration_ms, end_lsn=lsn, end_commit_ts_us=commit_us)
    frame = spark.createDataFrame(pa.Table.from_batches([batch]), schema=_facts_struct())
    _append_facts(spark, facts_table, frame, txn_app_id, version)


def batch_facts(df: DataFrame) -> dict[str, Any]:
    """A batch's counts and ranges under their facts column names (rows, min_lsn, max_lsn,
    min_commit_ts, max_commit_ts, deletes, inserts, updates), in one Spark aggregation of the
    engine's expressions."""
    row = df.agg(*[F.expr(aggregate) for aggregate in _core.row_stats_aggregates()]).collect()[0]
    return row.asDict()


def bronze_columns(df: DataFrame) -> list[ColumnDef]:
    """The bronze table of a batch's rows: its columns, then _batch_id, _snapshot and _chunk, as
    (name, Spark SQL type, comment), the engine's comments on the columns it defines."""
    struct = StructType.fromJson(json.loads(_core.bronze_schema_json(df.schema.json())))
    return [(f.name, f.dataType.simpleString().upper(), f.metadata.get("comment")) for f in struct.fields]


def bronze_rows(df: DataFrame, batch_id: int | None = None, snapshot: Column | None = None) -> DataFrame:
    """`df` with bronze's own columns appended: _batch_id (`batch_id`), _snapshot (`snapshot`,
    a column holding the snapshot's LSN on snapshot rows) and _chunk, NULL where not given."""
    return df.select(
        "*", F.lit(batch_id).cast("int").alias("_batch_id"),
        (snapshot if snapshot is not None else F.lit(None)).cast("string").alias("_snapshot"),
        F.lit(None).cast("int").alias("_chunk"))


def read(spark: SparkSessionLike, facts_table: str, target: str, events: Sequence[str], columns: Sequence[str],
         app_id: str | re.Pattern[str] | None = None) -> list[Row]:
    """The facts rows of `target` whose event is one of `events`, with `columns`, of `app_id`
    (its name, or a pattern its whole name matches; every stream's when None). No rows when
    the facts table does not exist."""
    from pyspark.sql import Row as SparkRow

    table = tables.TableArg(facts_table, "facts_table")
    if not tables.check(spark, table, "facts"):
        return []
    frame = tables.read(spark, table).where((F.col("target") == target) & F.col("event").isin(list(events)))
    if isinstance(app_id, str):
        frame = frame.where(F.col("app_id") == app_id)
    found = frame.select(*dict.fromkeys([*columns, "app_id"])).collect()
    if isinstance(app_id, re.Pattern):
        found = [row for row in found if row["app_id"] is not None and app_id.fullmatch(row["app_id"])]
    return [SparkRow(**{name: row[name] for name in columns}) for row in found]
