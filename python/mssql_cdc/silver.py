"""``apply_changes`` on Spark: keeps a silver table, one row per source key, from bronze.

The engine decides (``silver/`` and ``catalog/silver_sql.h`` in C++, docs/silver.md): which
keys, whether an existing table is silver of this bronze, what a call applies (a rebuild from
a newer snapshot, or the changes past silver's position), the SQL that picks each key's latest
image and MERGEs it, and silver's new position. This module runs those statements through the
session, reads what they need (bronze's newest snapshot, the facts table's snapshot events,
the control row) and writes silver's position after the MERGE, so that a crash between the two
reruns rows that change nothing.

Tables are names (through the session's catalog) or absolute paths, as everywhere
(``mssql_cdc.tables``).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pyspark.sql import functions as F

from mssql_cdc import _core, backfill, finalization, tables
from mssql_cdc._glue import get_option
from mssql_cdc.errors import ConfigError
from mssql_cdc.migrations.bronze import BRONZE_COLUMN_COMMENTS  # noqa: F401 (exported here too, as in the reference)
from mssql_cdc.tables import delta_table, exists, retrying, table_ref  # noqa: F401 (exported here too)
from mssql_cdc.types import ApplyResult, Granularity, SourceOptions, SparkSessionLike

# The columns silver adds after the captured ones, as (name, Spark SQL type, comment), and its
# table comment: the engine's definition (silver/silver_schema.h).
SILVER_COLUMNS, SILVER_COMMENT = _core.table_definition("silver")

log = logging.getLogger("mssql_cdc")

_warned_no_facts: set[str] = set()


def _newest_snapshot(spark: Any, bronze_sql: str, version: int, instances: list[str],
                     newer_than: str | None) -> tuple[str, bool] | None:
    """The newest snapshot in bronze newer than `newer_than` (the one silver was rebuilt from):
    files whose statistics show none are skipped."""
    names = [name.lower() for name in instances]
    rows = spark.sql(f"SELECT * FROM {bronze_sql} VERSION AS OF {version}")
    if newer_than is not None:
        rows = rows.where((F.col("_start_lsn") > newer_than) | (F.col("_snapshot") > newer_than))
    rows = (rows.where((F.col("_operation") == 0) & F.lower("_capture_instance").isin(names))
            .select(F.coalesce("_snapshot", "_start_lsn").alias("lsn"), F.col("_chunk").isNotNull().alias("chunked"))
            .orderBy(F.desc("lsn"), F.desc("chunked")).limit(1).collect())
    return (rows[0]["lsn"], bool(rows[0]["chunked"])) if rows else None


def _with_range_deletes(spark: Any, plan_json: str, bronze: tables.TableArg, bronze_schema_json: str,
                        keys: list[str], silver_sql: str, silver_exists: bool, plan_view: str) -> str | None:
    """The SELECT of the plan's rows and the waves' range deletes, or None when none apply (no
    wave, no silver yet, no plans table, a key they do not cover: silver/wave_ranges.h)."""
    if not silver_exists or not json.loads(plan_json)["range_deletes"]:
        return None
    plans = backfill.plans_table(bronze)
    if not tables.check(spark, plans, "plans"):
        return None
    return _core.silver_with_range_deletes_sql(plan_json, tables.sql_ref(plans), plans.text,
                                               lambda sql: spark.sql(sql).toArrow(), bronze_schema_json, keys,
                                               silver_sql, plan_view)


def _table_instances(options: Mapping[str, str] | None, capture_instance: str) -> tuple[list[str], list[str]]:
    """The capture instances of the table and the instance's index columns, from SQL Server
    when the stream's options are given."""
    if not options:
        return [capture_instance], []
    read = {k: v for k, v in options.items() if k.lower() != "captureinstance"}
    read["captureInstance"] = capture_instance
    feed = _core.Feed(read)
    return list(feed.table_instances()), list(feed.index_columns())


def apply_changes(
    spark: SparkSessionLike,
    bronze: str,
    target: str,
    *,
    capture_instance: str | None = None,
    keys: Sequence[str] | None = None,
    control_table: str,
    facts_table: str | None = None,
    options: SourceOptions | Mapping[str, Any] | None = None,
    granularity: Granularity = "hour",
) -> ApplyResult:
    """Applies bronze's rows past silver's position to silver `target` (created when missing)
    in one MERGE, then records silver's position and verdict in `control_table`."""
    _core.parse_granularity(granularity)
    if isinstance(keys, str):
        keys = [keys]
    bronze_arg = tables.TableArg(bronze, "bronze")
    silver_arg = tables.TableArg(target, "target")
    control = tables.TableArg(control_table, "control_table")
    facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None
    if bronze_arg.text == silver_arg.text:
        raise ConfigError(f"target={target!r} is bronze itself; name the silver table")
    capture_instance = capture_instance or (get_option(options, "captureInstance") if options else None)
    if not capture_instance:
        raise ConfigError("apply_changes needs the capture instance: give capture_instance, or the stream's "
                          "options with captureInstance")
    instances, index_columns = _table_instances(options, capture_instance)
    keys = list(keys) if keys else index_columns
    if not keys:
        raise ConfigError("apply_changes needs key columns: give keys, or the stream's options so that it can "
                          "read the capture instance's unique index")
    tables.check(spark, control, "control")
    if facts is not None:
        tables.check(spark, facts, "facts")
    if not tables.check(spark, bronze_arg, "bronze"):
        log.warning("mssql_cdc: apply_changes: bronze %s does not exist yet; silver %s is left as it is", bronze, target)
        return ApplyResult(rebuilt=False, applied_lsn=None, finalized_until=None, bronze_found=False)

    # The verdict first: bronze read afterwards holds at least what it covers.
    bronze_verdict = finalization.verdict_json(spark, control, bronze)
    position = finalization.position_of(spark, control, target)
    bronze_sql = tables.sql_ref(bronze_arg)
    detail = spark.sql(f"DESCRIBE DETAIL {bronze_sql}").collect()[0]
    bronze_id = str(detail["id"])
    version = tables.sql_version(spark, bronze_sql)
    bronze_schema_json = spark.sql(f"SELECT * FROM {bronze_sql} VERSION AS OF {version}").schema.json()
    keys = list(_core.silver_keys(bronze_schema_json, bronze, keys))

    silver_sql = tables.sql_ref(silver_arg)
    silver_exists = tables.check(spark, silver_arg, "silver")
    silver_schema_json = None
    if silver_exists:
        silver_schema_json = spark.table(silver_arg.name).schema.json() if silver_arg.is_name else \
            spark.read.format("delta").load(silver_arg.text).schema.json()
        properties = {str(r["key"]): str(r["value"]) for r in spark.sql(f"SHOW TBLPROPERTIES {silver_sql}").collect()}
        _core.check_silver(silver_schema_json, properties, target, bronze_schema_json, bronze, bronze_id, keys)

    rebuilt_from = json.loads(position).get("snapshot_lsn") if position else None
    newest = _newest_snapshot(spark, bronze_sql, version, instances, rebuilt_from)
    chunked = bool(newest and newest[1])
    events = backfill.snapshot_events(spark, facts, bronze) if chunked and facts is not None else None
    if events is not None:
        # A wave's facts rows are written after its bronze commit: bronze's version now holds
        # every wave they name (read before them, it could lack the newest, counted as applied).
        version = tables.sql_version(spark, bronze_sql)
        bronze_schema_json = spark.sql(f"SELECT * FROM {bronze_sql} VERSION AS OF {version}").schema.json()
    plan_json = _core.silver_plan(position, newest[0] if newest else None, chunked, events, bronze)
    plan = json.loads(plan_json)

    run = uuid.uuid4().hex
    rows_view, images_view = f"_mssql_cdc_rows_{run}", f"_mssql_cdc_images_{run}"
    stamp_sql = _core.silver_wave_stamp_sql(plan_json, bronze_sql, version)
    oldest_wave_stamp = (spark.sql(stamp_sql).collect()[0][0] or "") if stamp_sql else ""
    rows_sql, instances_sql, images_sql, merge_sql, migrate = _core.silver_statements(
        plan_json, bronze_sql, version, oldest_wave_stamp, bronze_schema_json, keys, silver_sql, silver_schema_json,
        rows_view, images_view)
    rows = spark.sql(rows_sql)
    found = [r[0] for r in spark.sql(instances_sql).collect()]
    _core.check_silver_instances([f or "" for f in found], instances, bronze)

    if not silver_exists:
        if silver_arg.is_name:
            spark.sql(_core.silver_create_sql(silver_arg.text, bronze_schema_json, bronze, bronze_id))
        else:
            _core.ensure_silver(silver_arg.text, bronze_schema_json, bronze, bronze_id)
    for statement in migrate:
        spark.sql(statement)
    plan_view = f"_mssql_cdc_plan_rows_{run}"
    rows.createOrReplaceTempView(plan_view)
    try:
        newest = rows.agg(F.max("_start_lsn").alias("any"),
                          F.max(F.when(F.col("_operation") != 0, F.col("_start_lsn"))).alias("change")).collect()[0]
        max_lsn = newest["change"] or ""
        # The waves' range deletes rank with the rows; silver's position moves by the rows alone.
        ranked_sql = _with_range_deletes(spark, plan_json, bronze_arg, bronze_schema_json, keys, silver_sql,
                                         silver_exists, plan_view)
        spark.sql(ranked_sql or f"SELECT * FROM {plan_view}").createOrReplaceTempView(rows_view)
        if newest["any"] or plan["rebuild"] or ranked_sql:
            spark.sql(images_sql).createOrReplaceTempView(images_view)
            try:
                spark.sql(merge_sql).collect()
            finally:
                spark.catalog.dropTempView(images_view)
    finally:
        spark.catalog.dropTempView(rows_view)
        spark.catalog.dropTempView(plan_view)

    moved = _core.silver_position_after(plan_json, position, max_lsn)
    verdict = None
    if facts is None:
        if target not in _warned_no_facts:
            _warned_no_facts.add(target)
            log.warning("mssql_cdc: apply_changes: no facts_table for silver %s: its verdict does not move "
                        "(give the stream's facts table)", target)
    elif not plan["hold_verdict"]:
        verdict = bronze_verdict
    if control.is_name:
        tables.ensure(spark, control, "control")
        sql = _core.silver_position_sql(control.text, target, position, moved, verdict)
        affected = int(spark.sql(sql).collect()[0]["num_affected_rows"])
        if affected != 1:
            _core.silver_position_moved(control_table, target)
    else:
        _core.write_silver_position(control.text, target, position, moved, verdict)
    after = finalization.verdict_json(spark, control, target)
    until = json.loads(after)["finalized_until"] if after else None
    return ApplyResult(rebuilt=bool(plan["rebuild"]), applied_lsn=json.loads(moved)["applied_lsn"],
                       finalized_until=datetime.fromisoformat(until) if until else None, bronze_found=True)
