"""``stream(spark, options).to_delta(...)``: one capture instance into one bronze Delta table.

``to_delta`` checks its arguments and the source options (the engine parses the options and
resolves the capture instance before anything starts) and its tables: ``target`` and
``facts_table`` are table names or absolute paths or URIs (``mssql_cdc.tables``), each checked,
and its statements prepared, before the first is created (``mssql_cdc.stream_start``). It then
creates bronze and the facts table, runs the bootstrap snapshot when asked (the engine's own,
remembered under the checkpoint, written through the session: ``mssql_cdc.bootstrap``), starts
``readStream.format("mssql_cdc")`` into ``foreachBatch(delta_sink)`` and returns the
StreamingQuery without waiting.

With ``bootstrap=True`` and ``snapshot="chunked"`` it opens a chunked snapshot at S instead and
starts the stream there at once; ``CdcStream.backfill`` then reads it (``mssql_cdc.backfill``).

With ``on_data_loss="resnapshot"`` every start first runs the re-snapshot pre-flight
(``mssql_cdc.generations``): when cleanup purged the changes after where the stream stands, the
table is snapshotted again and generation n + 1 goes on from it.

With ``snapshot_on_switch=True`` the sink follows the batch that first reads a newer capture
instance with a snapshot of the table (``mssql_cdc.sink.snapshot_after_switch``).
Each batch's offsets and what its read measured reach the sink through a metrics directory
(``mssql_cdc.handoff``): ``<metricsPath>/<app_id>`` when that option is given, else
``<checkpoint>/_mssql_cdc_metrics/<app_id>``. It is opened and written once before anything
else is: a ``metricsPath`` that cannot be (``dbfs:/``, no permission) is a ConfigError. A
checkpoint URI ``pyarrow.fs`` cannot open, without a ``metricsPath``, runs without metrics,
with a warning.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mssql_cdc import _core, backfill, snapshot_source, tables
from mssql_cdc import bootstrap as bootstrap_snapshot
from mssql_cdc._glue import copy_options, set_option
from mssql_cdc.errors import ConfigError
from mssql_cdc.source import register
from mssql_cdc.stream_start import StreamStart
from mssql_cdc.types import (  # noqa: F401 (the reference's pipeline exports the types of its signatures)
    BackfillState,
    BackfillStatus,
    Isolation,
    Offset,
    OnDataLoss,
    SnapshotMode,
    SourceOptions,
    SparkSessionLike,
)

if TYPE_CHECKING:
    from datetime import datetime

    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

log = logging.getLogger("mssql_cdc")


class CdcStream:
    """A configured CDC stream of one capture instance; made by ``stream()``."""

    def __init__(self, spark: SparkSessionLike, options: SourceOptions | Mapping[str, Any]):
        self._spark = spark
        self._options = options

    @property
    def options(self) -> dict[str, str]:
        """The stream's options (a copy); assigning a mapping replaces them, as in the reference."""
        return dict(self._options)

    @options.setter
    def options(self, options: SourceOptions | Mapping[str, Any]) -> None:
        self._options = copy_options(options)

    @property
    def spark(self) -> SparkSessionLike:
        return self._spark

    def to_delta(
        self,
        target: str,
        app_id: str,
        checkpoint: str,
        facts_table: str | None = None,
        *,
        trigger: dict[str, Any] | None = None,
        query_name: str | None = None,
        bootstrap: bool = False,
        on_data_loss: OnDataLoss = "fail",
        resnapshot_interval_days: float = 7.0,
        snapshot_on_switch: bool = False,
        snapshot: SnapshotMode = "full",
    ) -> StreamingQuery:
        """Starts the stream into `target` and returns its StreamingQuery (not waiting)."""
        return StreamStart(self._spark, self._options, target, app_id, checkpoint, facts_table, trigger=trigger,
                           query_name=query_name, bootstrap=bootstrap, on_data_loss=on_data_loss,
                           resnapshot_interval_days=resnapshot_interval_days,
                           snapshot_on_switch=snapshot_on_switch, snapshot=snapshot).ready().start()


    def snapshot(self, target: str, *, resnapshot: bool = False, app_id: str | None = None,
                 facts_table: str | None = None) -> Offset:
        """Appends the table's current rows to `target` as operation-0 rows in one Delta commit,
        stamped with the LSN recorded before the read, read by Spark's tasks in key ranges;
        returns that offset ``{"lsn", "commit_ts"}``. When `target` already holds a snapshot of
        the table (of any of its capture instances) it returns that one's offset and reads
        nothing, unless `resnapshot`. With `facts_table`, `app_id` is required (the stream
        whose snapshot this is); no facts row is written."""
        if not isinstance(target, str) or not target:
            raise ConfigError(f"snapshot: target must be a non-empty string, not {target!r}")
        if not isinstance(resnapshot, bool):
            raise ConfigError(f"snapshot: resnapshot must be True or False, not {resnapshot!r}")
        if facts_table is not None and not app_id:
            raise ConfigError("snapshot: facts_table is given without app_id; pass the app_id of the "
                              "stream the snapshot is for, or leave facts_table out")
        target_table = tables.TableArg(target, "target")
        options = dict(self._options)
        feed = _core.Feed(options)
        output_schema = feed.spark_schema_json()
        capture_instance = feed.capture_instance
        instances = feed.table_instances()
        del feed
        if facts_table is not None:
            events = backfill.snapshot_events(self._spark, tables.TableArg(facts_table, "facts_table"), target)
            _core.check_mode_lock(events, app_id, "full", "snapshot()")
        bronze_plan = tables.prepare(self._spark, target_table, "bronze", output_schema_json=output_schema,
                                     capture_instance=capture_instance)
        tables.ensure(self._spark, target_table, "bronze", output_schema_json=output_schema,
                      capture_instance=capture_instance, statements=bronze_plan)
        writer = bootstrap_snapshot.SparkBootstrapTables(self._spark, options, target_table, None,
                                                         output_schema)
        if not resnapshot:
            found = writer.find_snapshot(instances)
            if found is not None:
                log.info("mssql_cdc: %s already holds a snapshot of %s at %s; nothing is read",
                         target, capture_instance, found[0])
                return json.loads(_core.snapshot_offset(options, found[0]))
        plan = json.loads(_core.plan_snapshot_read(options, snapshot_source.partitions_of(self._spark, options)))
        user_metadata = json.dumps({"snapshot": capture_instance, "lsn": plan["lsn"],
                                    "commit_ts": plan["commit_ts"]})
        log.info("mssql_cdc: snapshot of %s into %s at %s in %d range(s)", capture_instance, target,
                 plan["lsn"], max(1, len(plan["chunks"])))
        frame = bootstrap_snapshot.snapshot_frame(self._spark, options, plan, writer.bronze_schema)
        tables.append(frame, target_table, user_metadata=user_metadata)
        return {"lsn": plan["lsn"], "commit_ts": plan["commit_ts"]}


    def seed(self, target: str, df: DataFrame, as_of: str | datetime, *, app_id: str | None = None,
             facts_table: str | None = None, allow_missing_columns: bool = False,
             reseed: bool = False) -> Offset:
        """Appends `df`, a copy of the table already in the lake, as `target`'s snapshot, as of
        `as_of` (a UTC datetime: when the copy started being read; or an LSN recorded before
        that); returns its offset. See ``mssql_cdc.seed``."""
        from mssql_cdc.seed import seed

        return seed(self._spark, self._options, target, df, as_of, app_id=app_id,
                    facts_table=facts_table, allow_missing_columns=allow_missing_columns,
                    reseed=reseed)


    def backfill(self, target: str, *, app_id: str, facts_table: str, chunk_rows: int | None = None,
                 max_waves: int | None = None, max_seconds: float | None = None,
                 target_wave_seconds: float | None = None, min_headroom_hours: float | None = None,
                 isolation: Isolation | None = None) -> BackfillStatus:
        """Reads the chunked snapshot ``to_delta(..., bootstrap=True, snapshot="chunked")`` opened
        for `target` and `app_id`, in waves of ``numPartitions`` chunks, next to the running
        stream; returns a BackfillStatus (``snapshot``, ``chunks_done``, ``chunks_total``,
        ``rows``, ``done``, ``paused``, ``state``, ``reason``). Call it again until ``state`` is
        ``"done"``. The first call plans the chunks (``chunk_rows`` each at most, default
        1,000,000) into the plans table beside `target`. ``max_waves``/``max_seconds`` bound one
        call; ``target_wave_seconds`` (default 300) sizes waves by the pace of the last;
        ``min_headroom_hours`` pauses while the stream's retention headroom is below it;
        ``isolation`` is ``"snapshot"`` or ``"readCommitted"`` (default: the isolationLevel
        option). States: done, running, waiting_headroom, waiting_metrics, no_snapshot."""
        for name, value in (("target", target), ("app_id", app_id), ("facts_table", facts_table)):
            if not isinstance(value, str) or not value:
                raise ConfigError(f"backfill: {name} must be a non-empty string, not {value!r}")
        budget = {"chunk_rows": _whole("chunk_rows", chunk_rows), "max_waves": _whole("max_waves", max_waves),
                  "max_seconds": _number("max_seconds", max_seconds),
                  "target_wave_seconds": _number("target_wave_seconds", target_wave_seconds),
                  "min_headroom_hours": _number("min_headroom_hours", min_headroom_hours)}
        _core.validate_backfill(**budget)
        options = dict(self._options)
        if isolation is not None:
            if not isinstance(isolation, str) or isolation.lower() not in ("snapshot", "readcommitted"):
                raise ConfigError(f'backfill: isolation must be "snapshot" or "readCommitted", not {isolation!r}')
            set_option(options, "isolationLevel", isolation)
        target_table = tables.TableArg(target, "target")
        facts = tables.TableArg(facts_table, "facts_table")
        tables.prepare(self._spark, backfill.plans_table(target_table), "plans")
        feed = _core.Feed(options)
        output_schema = feed.spark_schema_json()
        del feed
        status = backfill.run(self._spark, options, target_table, facts, app_id, output_schema, budget)
        log.info("mssql_cdc: backfill of %s: %s (%s of %s chunks)", target, status["state"],
                 status["chunks_done"], status["chunks_total"])
        return status


def _whole(name: str, value: Any) -> int | None:
    """A whole number argument as given (None stays None); never a bool, a float or a string."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"backfill: {name} must be a whole number or None, not {value!r}")
    return value


def _number(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"backfill: {name} must be a number or None, not {value!r}")
    return float(value)


def checked_start(cdc: CdcStream, target: str, app_id: str, checkpoint: str, facts_table: str | None = None, *,
                  facts_ready: bool = False, **to_delta_kwargs: Any) -> StreamStart:
    """``cdc.to_delta(...)``'s first step: its arguments, as to_delta takes them (its defaults,
    and TypeError for a name it does not take), checked; nothing written (mssql_cdc.stream_start)."""
    bound = inspect.signature(CdcStream.to_delta).bind(cdc, target, app_id, checkpoint, facts_table,
                                                       **to_delta_kwargs)
    bound.apply_defaults()
    arguments = {name: value for name, value in bound.arguments.items() if name != "self"}
    return StreamStart(cdc.spark, cdc.options, **arguments, facts_ready=facts_ready)


def native_starting_lsn(checkpoint: str) -> str | None:
    """The ``startingLsn`` that continues on Spark a stream the native engine started.

    `checkpoint` is the native stream's checkpoint directory; the LSN is where it stands (the
    end of its last batch in bronze). None when that stream never started. Continue into the
    same bronze table with a new ``app_id`` and a new Spark checkpoint, once the native stream
    has stopped.
    """
    offset = _core.native_checkpoint_offset(checkpoint)
    return None if offset is None else json.loads(offset)["lsn"]


def stream(spark: SparkSessionLike, options: SourceOptions | Mapping[str, Any]) -> CdcStream:
    """A CDC stream over `options` (copied) and registers the data source.

    Option names the engine does not know get one WARNING in the ``mssql_cdc`` logger, naming
    them all; they are ignored.
    """
    copied = copy_options(options)
    unknown = sorted(name for name in copied if _core.source_option_spelling(name) is None)
    if unknown:
        log.warning("mssql_cdc: unknown source options %s are ignored; the options are %s",
                    ", ".join(repr(n) for n in unknown), ", ".join(_core.source_option_names()))
    register(spark)
    return CdcStream(spark, copied)
