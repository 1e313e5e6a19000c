"""``delta_sink``: the ``foreachBatch`` function that appends a micro-batch to bronze, exactly once.

For each micro-batch, in this order (data first, facts after):

1. the batch is persisted once (where the cache API is refused, it is read twice instead) and
   summarised by one Spark aggregation (rows, LSN and commit time ranges, deletes, inserts,
   updates);
2. bronze is created or migrated on first use (``mssql_cdc.tables``: by the engine at a path, by Spark under a name), then the
   rows are appended with Spark's Delta writer, aligned to the engine's bronze schema
   (``_batch_id`` = the batch id, ``_snapshot`` and ``_chunk`` NULL), tagged
   ``txnAppId=app_id``, ``txnVersion=batch_id`` and the engine's userMetadata; a batch without
   rows writes no bronze commit;
3. with a facts table, the engine builds the batch's facts row (``_core.batch_facts``, plus a
   ``data_skipped`` row when the planner skipped purged changes) and Spark appends it tagged
   ``txnAppId=<app_id>#facts``, ``txnVersion=batch_id``.

A replayed batch id writes nothing: Delta finds its txn and skips the append. One query per
checkpoint: with a facts table, the sink's first batch checks that Spark's checkpoint agrees
with the batches the facts table recorded for the app id (``_core.check_facts_agree``), so a
checkpoint that was deleted, rewound or copied from another query fails with ConfigError
before it writes, instead of having its batches skipped as replays. The batch's start
and end offsets come from the planner through ``metrics_path`` (the reader's ``metricsPath``,
one stream per directory; ``mssql_cdc.handoff``). The sink connects to SQL Server only to
describe a range the planner skipped (``failOnDataLoss=false``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from mssql_cdc import _core, handoff, snapshot_source, tables
from mssql_cdc import bootstrap as bootstrap_snapshot
from mssql_cdc._glue import set_option
from mssql_cdc.facts_rows import (  # noqa: F401 (exported here, as in the reference)
    batch_facts, bronze_columns, bronze_rows, write_event, write_facts)
from mssql_cdc.metrics_dir import MetricsDir
from mssql_cdc.migrations.bronze import BRONZE_COLUMN_COMMENTS, BRONZE_COMMENT  # noqa: F401 (exported here)
from mssql_cdc.migrations.facts import (  # noqa: F401 (exported here too, as in the reference)
    DETAIL_COLUMNS, END_COLUMNS, EVENT_COLUMNS, KEY_VALUE_COMMENTS, LAG_COLUMNS, NETWORK_COLUMNS, POSSIBLE_COMMENTS,
    RETENTION_COLUMNS, SKIP_COMMENTS, SWITCH_COMMENTS, WARNING_COMMENTS)
from mssql_cdc.payloads import BatchDetail  # noqa: F401 (exported here too, as in the reference)
from mssql_cdc.tables import is_path  # noqa: F401 (exported here too, as in the reference)

log = logging.getLogger("mssql_cdc")

# Bronze and facts as the engine defines them (docs/reference/tables.md): columns as (name,
# Spark SQL type, comment), and the tables' comments. Bronze's are those of the columns the
# library adds; its comment here names no capture instance (a table's own names its).
FACTS_COLUMNS, FACTS_COMMENT = _core.table_definition("facts")
FACTS_SCHEMA = ", ".join(f"{name} {sql_type}" for name, sql_type, _ in FACTS_COLUMNS)

_EPOCH = datetime(1970, 1, 1)
_MICRO = timedelta(microseconds=1)


def _micros(value: datetime | None) -> int | None:
    return None if value is None else (value - _EPOCH) // _MICRO


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def batch_stats(df: DataFrame) -> dict[str, Any]:
    """The counts and ranges ``_core.batch_facts`` takes, in one Spark aggregation of the
    engine's expressions (which operations count as what is the engine's rule)."""
    row = batch_facts(df)
    return {
        "rows": int(row["rows"]),
        "deletes": int(row["deletes"]),
        "inserts": int(row["inserts"]),
        "updates": int(row["updates"]),
        "min_lsn": row["min_lsn"],
        "max_lsn": row["max_lsn"],
        "min_commit_ts_us": _micros(row["min_commit_ts"]),
        "max_commit_ts_us": _micros(row["max_commit_ts"]),
    }


def _bronze_rows(df: DataFrame, batch_id: int, bronze: StructType) -> DataFrame:
    """The batch's rows in bronze's columns and types: ``_batch_id`` set, absent columns NULL."""
    present = set(df.columns)
    columns = []
    for field in bronze.fields:
        if field.name in present:
            column = F.col(_quoted(field.name))
        elif field.name == "_batch_id":
            column = F.lit(batch_id)
        else:
            column = F.lit(None)
        columns.append(column.cast(field.dataType).alias(field.name))
    return df.select(*columns)


# What a Spark job interrupted by StreamingQuery.stop() fails with.
_INTERRUPTIONS = ("java.lang.InterruptedException", "java.io.InterruptedIOException",
                  "java.nio.channels.ClosedByInterruptException")


class SinkInterrupted(RuntimeError):
    """A micro-batch's writes were interrupted because its query is stopping.

    Spark recognises an interrupted ``foreachBatch`` by matching the error's text with a
    pattern that overflows the stack on a long text (a Java stack trace), which kills the query
    thread; this error's text is short and still matches it.
    """


def _interrupted(error: BaseException) -> str | None:
    text = str(error)
    for name in _INTERRUPTIONS:
        if name in text:
            return name
    if "cancelled" in text and "org.apache.spark.SparkException" in text:
        return "java.lang.InterruptedException"
    return None


def stopping_as_interrupted(target: str, write_batch: Callable[[DataFrame, int], None]
                            ) -> Callable[[DataFrame, int], None]:
    """`write_batch` as a ``foreachBatch`` function whose failure while its query stops is a
    SinkInterrupted; other failures are raised as they are."""
    def sink(df: DataFrame, batch_id: int) -> None:
        try:
            write_batch(df, batch_id)
        except Exception as error:  # noqa: BLE001 (re-raised, shortened only when stopping)
            name = _interrupted(error)
            if name is None:
                raise
            raise SinkInterrupted(
                f"py4j.protocol.Py4JJavaError: An error occurred while calling the sink of {target} "
                f"(batch {batch_id}): {name}") from None

    return sink


_cache_refused_logged = False


def _persisted(df: DataFrame) -> tuple[DataFrame, bool]:
    """`df` persisted, so the aggregation and the append read the batch once; where the
    platform refuses the cache API (serverless), `df` as it is, read once more by the append."""
    global _cache_refused_logged
    try:
        return df.persist(), True
    except Exception as error:  # noqa: BLE001 (any refusal: go on without the cache)
        if not _cache_refused_logged:
            log.info("mssql_cdc: the cache API is refused here (%s); each batch is read twice",
                     str(error).splitlines()[0][:200])
            _cache_refused_logged = True
        return df, False


def _struct(schema_json: str) -> StructType:
    return StructType.fromJson(json.loads(schema_json))


def delta_sink(
    target: str,
    app_id: str,
    facts_table: str | None = None,
    *,
    metrics_path: str | None = None,
    options: Mapping[str, str] | None = None,
) -> Callable[[DataFrame, int], None]:
    """The ``foreachBatch`` function that appends each micro-batch to `target` (see the module).

    `options` (the stream's source options) is needed only to describe changes the planner
    skipped with ``failOnDataLoss=false``: the sink then asks the source once for the range.
    """
    return sink_for(target, app_id, facts_table, metrics_path=metrics_path, options=options,
                    tables_ready=False)


def sink_for(
    target: str,
    app_id: str,
    facts_table: str | None,
    *,
    metrics_path: str | None,
    options: Mapping[str, str] | None,
    tables_ready: bool,
    snapshot_on_switch: bool = False,
) -> Callable[[DataFrame, int], None]:
    """``delta_sink``; with `tables_ready` bronze and the facts table were just created or
    migrated by the caller (``to_delta``), so the first batch does not check them again. With
    `snapshot_on_switch` (and `options`), the batch that first reads a newer capture instance
    is followed by a snapshot of the table (``snapshot_after_switch``)."""
    bronze_table = tables.TableArg(target, "target")
    facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None
    source_options = dict(options) if options is not None else None
    metrics = MetricsDir(metrics_path) if metrics_path else None
    ready = {"bronze": tables_ready, "facts": tables_ready, "checked": False, "warned": False}

    def check_checkpoint(df: DataFrame, batch_id: int, start: str | None, end: str | None) -> None:
        """The first batch of this sink: Spark's checkpoint must agree with the facts table."""
        if not ready["facts"]:
            tables.ensure(df.sparkSession, facts, "facts")
            ready["facts"] = True
        recorded = (
            tables.read(df.sparkSession, facts)
            .where((F.col("app_id") == app_id) & F.col("event").isNull()
                   & (F.col("batch_id") >= batch_id - 1))
            .select("batch_id", "end_lsn")
            .collect()
        )
        _core.check_facts_agree([(int(r["batch_id"]), r["end_lsn"]) for r in recorded], app_id,
                                facts_table, batch_id, start, end)
        ready["checked"] = True

    def measures_of(planned: handoff.PlannedBatch | None) -> list[str]:
        """The metrics documents the batch's planner and tasks left; none when they cannot be read."""
        if planned is None:
            return []
        try:
            found = handoff.range_metrics(metrics, planned.end_lsn)
        except Exception as e:  # noqa: BLE001 (metrics are best effort)
            log.warning("mssql_cdc: could not read the metrics files in %s: %s", metrics.location, e)
            return []
        return found + ([planned.metrics] if planned.metrics else [])

    def write_facts(df: DataFrame, batch_id: int, rows: list[pa.RecordBatch]) -> None:
        spark = df.sparkSession
        if not ready["facts"]:
            tables.ensure(spark, facts, "facts")
            ready["facts"] = True
        table = pa.Table.from_batches(rows)
        frame = spark.createDataFrame(table, schema=_struct(_core.facts_schema_json()))
        tables.append(frame, facts, txn_app_id=f"{app_id}#facts", txn_version=batch_id)

    def write_batch(df: DataFrame, batch_id: int) -> None:
        started = time.time()
        started_us = int(started * 1_000_000)
        planned = handoff.newest(metrics) if metrics else None
        start = planned.start if planned else None
        end = planned.end if planned else None
        if facts_table is not None and not ready["checked"]:
            check_checkpoint(df, batch_id, start, end)
        df, persisted = _persisted(df)
        try:
            stats = batch_stats(df)
            output_schema = df.schema.json()
            if not ready["bronze"]:
                tables.ensure(df.sparkSession, bronze_table, "bronze", output_schema_json=output_schema)
                ready["bronze"] = True
            if stats["rows"] > 0:
                _, metadata, _ = _core.batch_facts(app_id, batch_id, target, stats, start, end, started_us, 0)
                bronze = _struct(_core.bronze_schema_json(output_schema))
                tables.append(_bronze_rows(df, batch_id, bronze), bronze_table, txn_app_id=app_id,
                              txn_version=batch_id, user_metadata=metadata, merge_schema=True)
            if facts_table is not None:
                duration_ms = int((time.time() - started) * 1000)
                measured = measures_of(planned)
                row, _, folded = _core.batch_facts(app_id, batch_id, target, stats, start, end, started_us,
                                                   duration_ms, measured)
                if stats["rows"] > 0 and not folded and not ready["warned"]:
                    ready["warned"] = True
                    log.warning("mssql_cdc: batch %d of %s found no metrics file in %s; its read time, "
                                "retention and lag columns are NULL (warned once per run)", batch_id,
                                target, metrics.location if metrics else "(no metricsPath)")
                rows = [row]
                if planned is not None:
                    events = _core.schema_event_facts(app_id, target, batch_id, planned.events)
                    if events is not None:
                        rows.append(events)
                if planned is not None and planned.skipped is not None and source_options is not None:
                    skipped = _core.Feed(source_options).skipped_facts(app_id, target, batch_id, start, end)
                    if skipped is not None:
                        rows.append(skipped)
                write_facts(df, batch_id, rows)
            if snapshot_on_switch and planned is not None and source_options is not None:
                switched = [e for e in json.loads(planned.events) if e["event"] == "capture_instance_switched"]
                if switched:
                    snapshot_after_switch(df.sparkSession, source_options, bronze_table, app_id, batch_id,
                                          switched[-1]["capture_instance"],
                                          _struct(_core.bronze_schema_json(output_schema)))
        finally:
            if persisted:
                try:
                    df.unpersist()
                except Exception:  # noqa: BLE001 (an interrupted batch may fail here; the cache goes anyway)
                    pass
        if planned is not None:
            try:
                handoff.remove_through(metrics, planned.end_lsn)
            except Exception as e:  # noqa: BLE001 (left-over files are skipped by later batches)
                log.warning("mssql_cdc: could not delete the metrics files in %s: %s", metrics.location, e)

    return stopping_as_interrupted(target, write_batch)


def snapshot_after_switch(spark: Any, options: Mapping[str, str], bronze: tables.TableArg, app_id: str,
                          batch_id: int, capture_instance: str, bronze_schema: StructType) -> None:
    """snapshot_on_switch: the table's current rows, read through `capture_instance` (the newer
    one) by Spark's tasks in key ranges and stamped with the max LSN recorded before the read,
    appended to bronze tagged txn(``<app_id>#switch``, batch id), so that a replayed batch does
    not take it twice; rows no change touched since the switch get the new columns."""
    read = dict(options)
    set_option(read, "captureInstance", capture_instance)
    plan = json.loads(_core.plan_snapshot_read(read, snapshot_source.partitions_of(spark, read)))
    user_metadata = json.dumps({"snapshot": capture_instance, "lsn": plan["lsn"], "commit_ts": plan["commit_ts"],
                                "after_switch_batch": batch_id})
    log.info("mssql_cdc: snapshot of %s after the switch of batch %d at %s (snapshot_on_switch)",
             capture_instance, batch_id, plan["lsn"])
    frame = bootstrap_snapshot.snapshot_frame(spark, read, plan, bronze_schema)
    tables.append(frame, bronze, txn_app_id=f"{app_id}#switch", txn_version=batch_id,
                  user_metadata=user_metadata, merge_schema=True)
