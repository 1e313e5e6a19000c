"""``stream(spark, options).to_delta(...)``: one capture instance into one bronze Delta table.

``to_delta`` checks its arguments and the source options (the engine parses the options and
resolves the capture instance before anything starts) and its tables: ``target`` and
``facts_table`` are table names or absolute paths or URIs (``mssql_cdc.tables``), each checked,
and its statements prepared, before the first is created. It then creates bronze and the facts
table, runs the bootstrap snapshot when asked (the engine's own, remembered under the
checkpoint, written through the session: ``mssql_cdc.bootstrap``), starts
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

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql.types import StructType

from mssql_cdc import _core, backfill, bronze_sink, bronze_source, generations, snapshot_source, tables
from mssql_cdc import bootstrap as bootstrap_snapshot
from mssql_cdc._glue import copy_options, get_option, join, option_text, set_option, without_options
from mssql_cdc.source import NAME, register
from mssql_cdc.errors import ConfigError
from mssql_cdc.metrics_dir import MetricsDir
from mssql_cdc.sink import sink_for
from mssql_cdc.spark_checkpoint import SparkCheckpoint
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

METRICS_DIR = "_mssql_cdc_metrics"
BOOTSTRAP_DIR = "_mssql_cdc_bootstrap"


def _stream_params(**values: Any) -> dict[str, str]:
    """to_delta's keyword arguments as the engine's parameter text (core/stream_params.h):
    strings as they are, True/False as option_text writes them, days as a float's digits; None
    leaves one out.
    A value of another type is refused here, since no text stands for it."""
    params = {}
    for name, value in values.items():
        if value is None:
            continue
        if name in ("bootstrap", "snapshot_on_switch"):
            if not isinstance(value, bool):
                raise ConfigError(f"to_delta: {name} must be True or False, not {value!r}")
            params[name] = option_text(value)
        elif name == "resnapshot_interval_days":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"to_delta: {name} must be a number of days, 0 or more, not {value!r}")
            params[name] = repr(float(value))
        elif not isinstance(value, str):
            raise ConfigError(f"to_delta: {name} must be a string, not {value!r}")
        else:
            params[name] = value
    return params


class CdcStream:
    """A configured CDC stream of one capture instance; made by ``stream()``."""

    def __init__(self, spark: SparkSessionLike, options: SourceOptions | Mapping[str, Any]):
        self._spark = spark
        self._options = options
        # Where the facts table is, when whoever made this stream (start_many) created or
        # migrated it just before: to_delta then neither checks it again nor asks where it is.
        self._facts_ready: tuple[str, str] | None = None  # (facts_table as given, its location)

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
        # Python's types become the parameters' text; the engine's rules for them (required,
        # values, combinations with the options) are checked in C++, as for a native stream.
        params = _stream_params(target=target, app_id=app_id, checkpoint=checkpoint, facts_table=facts_table,
                                bootstrap=bootstrap, on_data_loss=on_data_loss,
                                resnapshot_interval_days=resnapshot_interval_days,
                                snapshot_on_switch=snapshot_on_switch, snapshot=snapshot)
        if trigger is not None and not isinstance(trigger, Mapping):
            raise ConfigError(
                f'to_delta: trigger must be a mapping such as {{"availableNow": True}}, not {trigger!r}')
        options = dict(self._options)
        _core.validate_stream(options, params)
        days = float(resnapshot_interval_days)

        target_table = tables.TableArg(target, "target")
        facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None
        tables.check_location(checkpoint, "checkpoint")
        spark_checkpoint = SparkCheckpoint(self._spark, checkpoint)
        spark_checkpoint.check_readable()
        # The engine parses every option (warning about unknown names) and resolves the capture
        # instance: errors here start nothing. Bronze is created as a native stream creates it.
        feed = _core.Feed(options)
        output_schema = feed.spark_schema_json()
        capture_instance = feed.capture_instance
        del feed
        # Every check before the first write: a bad facts table creates no bronze table.
        bronze_plan = tables.prepare(self._spark, target_table, "bronze", output_schema_json=output_schema,
                                     capture_instance=capture_instance)
        facts_ready = self._facts_ready is not None and facts is not None and self._facts_ready[0] == facts.text
        facts_plan = tables.prepare(self._spark, facts, "facts") if facts is not None and not facts_ready else None
        if (not bootstrap and spark_checkpoint.last_processed() is None
                and tables.check(self._spark, target_table, "bronze")):
            # A fresh stream from the earliest change into a bronze other streams wrote.
            _core.check_fresh_start(options, tables.location(self._spark, target_table), app_id, target)
        # A metricsPath given is checked before anything is written; the default one, under the
        # checkpoint, is made only when delta_sink's route reads the stream (below).
        metrics = metrics_location(options, checkpoint, app_id) if get_option(options, "metricsPath") else None
        tables.ensure(self._spark, target_table, "bronze", output_schema_json=output_schema,
                      capture_instance=capture_instance, statements=bronze_plan)
        if facts is not None and not facts_ready:
            tables.ensure(self._spark, facts, "facts", statements=facts_plan)
        resnapshot = None
        if on_data_loss == "resnapshot":
            # Generation n's checkpoint and sink id stand for the stream's; the pre-flight may
            # snapshot the table again and move on to generation n + 1 (mssql_cdc.generations).
            current, resnapshot = generations.preflight(self._spark, options, checkpoint, app_id, facts,
                                                        target_table.text, float(days))
            checkpoint, app_id = current["checkpoint"], current["app_id"]
            if resnapshot is None and current["generation"] > 0:
                set_option(options, "startingLsn", current["snapshot_lsn"])
        if bootstrap and facts is not None and resnapshot is None:
            # One mode per run: an open snapshot of the other mode refuses the start.
            _core.check_mode_lock(backfill.snapshot_events(self._spark, facts, target_table.text), app_id,
                                  snapshot, f'to_delta(bootstrap=True, snapshot="{snapshot}")')
        lsn = None
        if resnapshot is not None:
            lsn = generations.resnapshot(self._spark, options, target_table, facts, resnapshot, snapshot,
                                         join(checkpoint, BOOTSTRAP_DIR), output_schema)
            set_option(options, "startingLsn", lsn)
        elif bootstrap and snapshot == "chunked":
            lsn = backfill.open_chunked(self._spark, options, target_table, facts, app_id, checkpoint,
                                        output_schema)
            if lsn is not None:
                set_option(options, "startingLsn", lsn)
                log.info("mssql_cdc: chunked snapshot of %s open at %s; the stream starts there and "
                         "backfill() reads the table", capture_instance, lsn)
        if bootstrap and lsn is None and not (on_data_loss == "resnapshot" and current["generation"] > 0):
            log.info("mssql_cdc: bootstrap of %s into %s", capture_instance, target)
            lsn = bootstrap_snapshot.run(self._spark, options, target_table, facts, app_id,
                                         join(checkpoint, BOOTSTRAP_DIR), output_schema)
            set_option(options, "startingLsn", lsn)
            log.info("mssql_cdc: bootstrap done; the stream starts after %s", lsn)

        locations = bronze_sink.route_locations(self._spark, target_table, facts, checkpoint,
                                                facts_location=self._facts_ready[1] if facts_ready else None)
        if locations is not None:
            # The bronze route (decision 0019): the tasks write bronze's files, the engine commits.
            bronze_location, facts_location = locations
            options = without_options(options, "metricsPath")
            route = {bronze_source.BRONZE_LOCATION: bronze_location, bronze_source.SPARK_CHECKPOINT: checkpoint,
                     bronze_source.CHANGE_SCHEMA: output_schema}
            frame = self._spark.readStream.format(bronze_source.NAME).options(**options, **route).load()
            sink = bronze_sink.bronze_route_sink(target, bronze_location, app_id, facts_table, facts_location,
                                                 options=options, snapshot_on_switch=snapshot_on_switch)
        else:
            if metrics is None:
                metrics = metrics_location(options, checkpoint, app_id)
            if metrics:
                set_option(options, "metricsPath", metrics)
            else:
                options = without_options(options, "metricsPath")
            schema = StructType.fromJson(json.loads(output_schema))
            frame = self._spark.readStream.format(NAME).schema(schema).options(**options).load()
            sink = sink_for(target, app_id, facts_table, metrics_path=metrics, options=options,
                            tables_ready=True, snapshot_on_switch=snapshot_on_switch)
        writer = (
            frame.writeStream.foreachBatch(sink)
            .option("checkpointLocation", checkpoint)
            .queryName(query_name or app_id)
        )
        if trigger:
            writer = writer.trigger(**dict(trigger))
        return writer.start()


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


def metrics_location(options: Mapping[str, str], checkpoint: str, app_id: str) -> str | None:
    """The stream's metrics directory, opened and written once (see the module); None without one."""
    given = get_option(options, "metricsPath")
    if given:
        tables.check_location(given, "metricsPath")
        location = join(given, app_id)
        MetricsDir(location).probe()
        return location
    location = join(join(checkpoint, METRICS_DIR), app_id)
    try:
        directory = MetricsDir(location)
    except ConfigError:
        log.warning("mssql_cdc: pyarrow.fs cannot open the checkpoint %s, so the stream runs without "
                    "metrics: its facts rows lack offsets, read times, retention and lags. Set the "
                    "metricsPath option to a directory pyarrow.fs opens", checkpoint)
        return None
    directory.probe("the metrics directory under the checkpoint")
    return location


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
