"""``CdcStream.seed``: a copy of the table already in the lake stands for its snapshot
(docs/snapshots.md), for tables too big to snapshot within CDC retention.

The rules are the engine's (``snapshot/seed.h``): where the copy stands (``as_of`` mapped to the
last commit at or before it on the server's clock, or an LSN, with every refusal), how its
columns become the stream's, and whether the target's snapshot is this seed already. Here the
copy is written through the session as the snapshot: operation 0, ``_start_lsn`` and
``_snapshot`` the seed's LSN, ``_commit_ts`` its commit time, userMetadata
``{"seed", "lsn", "commit_ts"}``; ``to_delta(bootstrap=True)`` then finds it and reads nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import StructType, TimestampNTZType, TimestampType

from mssql_cdc import _core, tables
from mssql_cdc.bootstrap import SparkBootstrapTables
from mssql_cdc.errors import ConfigError

log = logging.getLogger("mssql_cdc")


def _as_of(value: Any) -> tuple[str | None, str | None]:
    """(time as UTC ISO text, None) for a datetime (naive ones are UTC), (None, lsn) for a str."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat(sep=" ", timespec="microseconds"), None
    if isinstance(value, str) and value:
        return None, value
    raise ConfigError(f"seed: as_of must be a datetime (UTC when naive) or an LSN string, not {value!r}")


def seed(spark: Any, options: Mapping[str, str], target: str, df: Any, as_of: Any, *,
         app_id: str | None = None, facts_table: str | None = None,
         allow_missing_columns: bool = False, reseed: bool = False) -> dict:
    """Appends `df` as `target`'s snapshot of the table; returns its offset ``{"lsn", "commit_ts"}``."""
    if not isinstance(target, str) or not target:
        raise ConfigError(f"seed: target must be a non-empty string, not {target!r}")
    for name, flag in (("allow_missing_columns", allow_missing_columns), ("reseed", reseed)):
        if not isinstance(flag, bool):
            raise ConfigError(f"seed: {name} must be True or False, not {flag!r}")
    if facts_table is not None and not app_id:
        raise ConfigError("seed: facts_table is given without app_id; pass the app_id of the stream "
                          "the seed is for, or leave facts_table out")
    if not hasattr(df, "columns") or not hasattr(df, "select"):
        raise ConfigError(f"seed: df must be a Spark DataFrame, not {type(df).__name__}")
    started_at = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    started = time.monotonic()
    options = dict(options)
    as_of_time, as_of_lsn = _as_of(as_of)
    target_table = tables.TableArg(target, "target")
    facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None

    # Every check before the first write.
    feed = _core.Feed(options)
    output_schema = feed.spark_schema_json()
    capture_instance = feed.capture_instance
    instances = feed.table_instances()
    del feed
    if facts is not None:
        # A seed is no snapshot of either mode: an open one of the stream refuses it.
        from mssql_cdc.backfill import snapshot_events

        events = snapshot_events(spark, facts, target)
        for mode in ("full", "chunked"):
            _core.check_mode_lock(events, app_id, mode, "seed()")
    columns = _core.seed_columns(options, list(df.columns), allow_missing_columns)
    offset = json.loads(_core.seed_point(options, as_of_time, as_of_lsn))
    bronze_plan = tables.prepare(spark, target_table, "bronze", output_schema_json=output_schema,
                                 capture_instance=capture_instance)
    facts_plan = tables.prepare(spark, facts, "facts") if facts is not None else None
    writer = SparkBootstrapTables(spark, options, target_table, facts, output_schema)
    exists = tables.check(spark, target_table, "bronze")
    found = writer.find_snapshot(instances) if exists else None
    action = _core.seed_action(found[0] if found else None, bool(found and found[1]), offset["lsn"], reseed)

    tables.ensure(spark, target_table, "bronze", output_schema_json=output_schema,
                  capture_instance=capture_instance, statements=bronze_plan)
    if facts is not None:
        tables.ensure(spark, facts, "facts", statements=facts_plan)
    if action == "existing":
        log.info("mssql_cdc: %s already holds this seed of %s at %s", target, capture_instance, offset["lsn"])
    else:
        frame = _frame(df, columns, writer.bronze_schema, capture_instance, offset)
        log.info("mssql_cdc: seeding %s with a copy of %s as of %s", target, capture_instance, offset["lsn"])
        tables.append(frame, target_table,
                      user_metadata=_core.seed_commit_metadata(capture_instance, json.dumps(offset)))
    if facts is not None:
        rows = writer.snapshot_rows(offset["lsn"])
        row = _core.bootstrap_facts_row(app_id, target, json.dumps(offset), rows, started_at.isoformat(),
                                        int((time.monotonic() - started) * 1000))
        writer.append_facts(row, f"{app_id}#events", 0)
    return offset


def _frame(df: Any, columns: list[tuple[str, str | None]], bronze: StructType, capture_instance: str,
           offset: Mapping[str, str]) -> Any:
    """The copy in bronze's schema: captured columns by name, cast; the engine's seed metadata
    (``_core.seed_metadata``), any other column NULL."""
    copy = dict(columns)
    metadata = _core.seed_metadata(capture_instance, json.dumps(offset))
    selected = []
    for field in bronze.fields:
        if field.name in metadata:
            value = F.lit(metadata[field.name])
            if isinstance(field.dataType, (TimestampType, TimestampNTZType)):
                value = value.cast("timestamp_ntz")  # UTC text: read without the session's zone
        elif copy.get(field.name) is not None:
            value = F.col(f"`{copy[field.name]}`")
        else:
            value = F.lit(None)
        selected.append(value.cast(field.dataType).alias(field.name))
    return df.select(*selected)
