"""Chunked snapshots on Spark: ``to_delta(..., bootstrap=True, snapshot="chunked")`` opens one at
S and starts the stream there at once; ``CdcStream.backfill`` reads it in waves next to the
running stream, a call at a time, until its state is ``done``.

The engine decides everything (engine/backfill.h): the plan, which chunks a wave reads, the
stamps, the facts rows, what a crash left. This module makes its reads and writes through the
session (``SparkBackfillTables``), so that named tables go through their catalog and a wave's
chunks are read by Spark's tasks through ``format("mssql_cdc_snapshot")``. The chunk bounds live
in the plans table beside bronze (``<target>_snapshot_plans``), never in the shared facts table.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F

from mssql_cdc import _core, tables
from mssql_cdc.bootstrap import SparkBootstrapTables, snapshot_frame

_EVENT_COLUMNS = ("event", "app_id", "min_lsn", "max_lsn", "rows", "duration_ms", "detail")


def snapshot_events(spark: Any, facts: tables.TableArg, target: str) -> str:
    """The facts table's snapshot events of bronze `target` as the engine reads them (JSON)."""
    if not tables.check(spark, facts, "facts"):
        return "[]"
    rows = (tables.read(spark, facts)
            .where((F.col("target") == target) & F.col("event").isNotNull())
            .select(*_EVENT_COLUMNS).collect())
    return json.dumps([row.asDict() for row in rows])


def plans_table(target: tables.TableArg) -> tables.TableArg:
    return tables.TableArg(_core.plans_table_for(target.text), "plans table")


class SparkBackfillTables(SparkBootstrapTables):
    """The reads and writes of a chunked snapshot, called by the engine (``_core.backfill``)."""

    def __init__(self, spark: Any, options: Mapping[str, str], bronze: tables.TableArg,
                 facts: tables.TableArg, output_schema_json: str) -> None:
        super().__init__(spark, options, bronze, facts, output_schema_json)
        self._plans = plans_table(bronze)

    def snapshot_events(self) -> str:
        return snapshot_events(self._spark, self._facts, self._bronze.text)

    def newest_headroom(self, app_id: str) -> tuple[float, float] | None:
        if not tables.check(self._spark, self._facts, "facts"):
            return None
        rows = (tables.read(self._spark, self._facts)
                .where((F.col("app_id") == app_id) & F.col("event").isNull()
                       & F.col("retention_headroom_hours").isNotNull())
                .orderBy(F.desc("written_at")).select("retention_headroom_hours", "written_at")
                .limit(1).collect())
        if not rows:
            return None
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        age_hours = (now - rows[0]["written_at"]).total_seconds() / 3600
        return float(rows[0]["retention_headroom_hours"]), age_hours

    def plans_columns(self) -> list[str] | None:
        if not tables.check(self._spark, self._plans, "plans"):
            return None
        return list(tables.read(self._spark, self._plans).columns)

    def read_plan(self, snapshot: str) -> pa.Table | None:
        """The plans table's rows of snapshot S, in whichever layout it has (this engine's, or
        0.8.0's rows of snapshot events): the engine reads the plan from them."""
        if not tables.check(self._spark, self._plans, "plans"):
            return None
        frame = tables.read(self._spark, self._plans).where(F.col("snapshot") == snapshot)
        rows = frame.collect()
        if not rows:
            return None
        return pa.Table.from_pylist([row.asDict() for row in rows])

    def write_plan(self, batch: pa.RecordBatch, txn_app_id: str, txn_version: int) -> bool:
        """Appends rows to the plans table (a plan, or 0.8.0's rows of chunks read); True when
        this append is the commit that holds the txn (its userMetadata, unique to it, is that
        commit's), so the plan need not be read back."""
        tables.ensure(self._spark, self._plans, "plans")
        # The rows in the layout they come in, with the engine's types and comments.
        layouts = (_core.plans_schema_json(), _core.chunk_plans_schema_json())
        schema = next(_struct(text) for text in layouts
                      if batch.schema.names == [f["name"] for f in json.loads(text)["fields"]])
        frame = self._spark.createDataFrame(pa.Table.from_batches([batch]), schema=schema)
        token = json.dumps({"plan_written_by": uuid.uuid4().hex})
        tables.append(frame, self._plans, txn_app_id=txn_app_id, txn_version=txn_version,
                      user_metadata=token)
        _, metadata = _core.txn_commit(self._location(self._plans), txn_app_id)
        return metadata == token

    def last_wave(self, txn_app_id: str) -> tuple[int, str | None]:
        """Bronze's txn version of `txn_app_id` and the userMetadata of the commit that set it,
        read from its Delta log (a named table's through its location)."""
        if not tables.check(self._spark, self._bronze, "bronze"):
            return -1, None
        version, metadata = _core.txn_commit(self._location(self._bronze), txn_app_id)
        return int(version), metadata

    def _location(self, table: tables.TableArg) -> str:
        return tables.location(self._spark, table)

    def chunk_rows(self, snapshot: str) -> dict[int, int]:
        rows = (tables.read(self._spark, self._bronze)
                .where((F.col("_snapshot") == snapshot) & F.col("_chunk").isNotNull())
                .groupBy("_chunk").count().collect())
        return {int(r["_chunk"]): int(r["count"]) for r in rows}

    def append_wave(self, wave_json: str, txn_app_id: str, txn_version: int, user_metadata: str) -> dict[int, int]:
        wave = json.loads(wave_json)
        frame = snapshot_frame(self._spark, self._options, wave, self.bronze_schema, snapshot=wave["snapshot"])
        tables.append(frame, self._bronze, txn_app_id=txn_app_id, txn_version=txn_version,
                      user_metadata=user_metadata)
        # Counted after the commit (the rows were never gathered): the wave's chunks at its stamp.
        chunks = [chunk[0] for chunk in wave["chunks"]]
        counted = (tables.read(self._spark, self._bronze)
                   .where((F.col("_snapshot") == wave["snapshot"]) & F.col("_chunk").isin(chunks))
                   .groupBy("_chunk").count().collect())
        rows = {int(r["_chunk"]): int(r["count"]) for r in counted}
        return {chunk: rows.get(chunk, 0) for chunk in chunks}


def _struct(schema_json: str) -> Any:
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(schema_json))


def open_chunked(spark: Any, options: Mapping[str, str], bronze: tables.TableArg, facts: tables.TableArg,
                 app_id: str, checkpoint: str, output_schema_json: str) -> str | None:
    """Opens (or finds) the chunked snapshot; the LSN the stream starts after, or None when bronze
    holds a snapshot of the table the facts rows do not know (the full bootstrap starts from it)."""
    writer = SparkBackfillTables(spark, options, bronze, facts, output_schema_json)
    offset = _core.open_chunked(dict(options), writer, bronze.text, app_id, facts.text, checkpoint)
    return json.loads(offset)["lsn"] if offset is not None else None


def run(spark: Any, options: Mapping[str, str], bronze: tables.TableArg, facts: tables.TableArg,
        app_id: str, output_schema_json: str, budget: Mapping[str, Any]) -> dict[str, Any]:
    """One backfill call; the BackfillStatus as a dict."""
    writer = SparkBackfillTables(spark, options, bronze, facts, output_schema_json)
    status = _core.backfill(dict(options), writer, bronze.text, app_id, **budget)
    return json.loads(status)
