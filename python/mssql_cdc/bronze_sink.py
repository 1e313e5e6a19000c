"""The ``foreachBatch`` function of ``to_delta``'s bronze route (decision 0019).

Its micro-batch is ``format("mssql_cdc_bronze")``'s: one row per task, saying which of bronze's
data files the task wrote for its range (``mssql_cdc.bronze_source``). Per batch, in this order:

1. the rows are collected, which runs the tasks: each reads its range and writes its files;
2. with a facts table, the sink's first batch checks that Spark's checkpoint agrees with the
   batches the facts table recorded for the app id (``_core.check_facts_agree``), as
   ``delta_sink`` does;
3. a batch with rows names every range's files in one bronze commit, tagged txn(app_id, batch id)
   and the engine's userMetadata (``_core.commit_bronze_ranges``); a replayed batch id commits
   nothing and its new files are deleted;
4. with a facts table, the batch's facts row (with its read measures, schema events and the
   range cleanup skipped) is appended by the engine, tagged txn(``<app_id>#facts``, batch id).

Bronze and the facts table are written by the engine at their locations: no Spark job but the
tasks' and no delta-spark commit per batch.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from mssql_cdc import _core, tables
from mssql_cdc.errors import ConfigError
from mssql_cdc.sink import snapshot_after_switch, stopping_as_interrupted

log = logging.getLogger("mssql_cdc")


def bronze_route_sink(
    target: str,
    bronze_location: str,
    app_id: str,
    facts_table: str | None,
    facts_location: str | None,
    *,
    options: Mapping[str, str],
    snapshot_on_switch: bool = False,
) -> Callable[[DataFrame, int], None]:
    """The sink of a stream whose tables were created (or migrated) by ``to_delta``: `target`
    and `facts_table` as the user named them (for the facts rows and messages), the
    locations the engine writes them at."""
    source_options = dict(options)
    checked = {"done": facts_location is None}

    def check_checkpoint(batch_id: int, start: str, end: str) -> None:
        recorded = pa.table(_core.delta_read(facts_location, [("app_id", "=", app_id),
                                                              ("batch_id", ">=", batch_id - 1)]))
        rows = [(int(r["batch_id"]), r["end_lsn"]) for r in recorded.to_pylist()
                if r["event"] is None and r["batch_id"] is not None and r["batch_id"] >= batch_id - 1]
        _core.check_facts_agree(rows, app_id, facts_table, batch_id, start, end)
        checked["done"] = True

    def write_batch(df: DataFrame, batch_id: int) -> None:
        started = time.time()
        started_us = int(started * 1_000_000)
        collected = df.collect()
        documents = [r["range"] for r in collected if r["range"] is not None]
        planned = [json.loads(r["batch"]) for r in collected if r["batch"] is not None]
        if len(planned) != 1:
            raise ConfigError(f"batch {batch_id} of {target} came with {len(planned)} planned batches instead of one; "
                              "its source is to_delta's own, read by to_delta alone")
        batch = planned[0]
        if batch["batch_id"] != batch_id:
            raise ConfigError(f"batch {batch_id} of {target} was planned as Spark's batch {batch['batch_id']}: the "
                              "query's checkpoint changed while it ran. Stop the query and start it again")
        start, end = batch["start"], batch["end"]
        if not checked["done"]:
            check_checkpoint(batch_id, start, end)
        stats, measures = _core.bronze_ranges_summary(documents)
        if stats["rows"] > 0:
            _, metadata, _ = _core.batch_facts(app_id, batch_id, target, stats, start, end, started_us, 0)
            _core.commit_bronze_ranges(bronze_location, documents, app_id, batch_id, metadata)
        if facts_location is not None:
            if batch["metrics"]:
                measures.append(batch["metrics"])
            duration_ms = int((time.time() - started) * 1000)
            row, _, _ = _core.batch_facts(app_id, batch_id, target, stats, start, end, started_us, duration_ms,
                                          measures)
            rows = [row]
            events = _core.schema_event_facts(app_id, target, batch_id, batch["events"])
            if events is not None:
                rows.append(events)
            if batch["skipped"] is not None:
                skipped = _core.Feed(source_options).skipped_facts(app_id, target, batch_id, start, end)
                if skipped is not None:
                    rows.append(skipped)
            _core.delta_append(facts_location, pa.Table.from_batches(rows), app_id=f"{app_id}#facts",
                               version=batch_id)
        if snapshot_on_switch:
            switched = [e for e in json.loads(batch["events"]) if e["event"] == "capture_instance_switched"]
            if switched:
                bronze = tables.TableArg(target, "target")
                schema = json.loads(_core.delta_snapshot(bronze_location)["schema_string"])
                snapshot_after_switch(df.sparkSession, source_options, bronze, app_id, batch_id,
                                      switched[-1]["capture_instance"], StructType.fromJson(schema))

    return stopping_as_interrupted(target, write_batch)


def route_locations(spark: Any, bronze: tables.TableArg, facts: tables.TableArg | None, checkpoint: str, *,
                    facts_location: str | None = None) -> tuple[str, str | None] | None:
    """Where the engine writes bronze and the facts table on the bronze route, or None when the
    route cannot be taken (a checkpoint that is not a local path, a table whose location the
    engine does not write) and ``delta_sink``'s is. `facts_location`: the facts table's, when
    already known (``engine_location``)."""
    if not os.path.isabs(checkpoint):
        return None
    bronze_location = engine_location(spark, bronze)
    if bronze_location is None:
        return None
    if facts is None:
        return bronze_location, None
    if facts_location is None:
        facts_location = engine_location(spark, facts)
    return None if facts_location is None else (bronze_location, facts_location)


def engine_location(spark: Any, table: tables.TableArg) -> str | None:
    """Where the engine writes `table` (which exists): a path as given; a name's catalog location
    when it is a local path; None when the engine does not reach it."""
    if not table.is_name:
        return table.text  # a path: the engine creates and writes it on every route
    location = tables.location(spark, table)
    if location.startswith("file:"):
        location = "/" + location[len("file:"):].lstrip("/")
    return location if os.path.isabs(location) else None
