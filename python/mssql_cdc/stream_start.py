"""One ``to_delta`` stream in three steps: checked, made ready, started.

- ``StreamStart(...)`` checks everything a start can know before writing: to_delta's arguments,
  the source options (the engine parses them and resolves the capture instance), the checkpoint,
  bronze and the facts table (each table's statements prepared), a fresh start into a bronze
  other streams wrote, a given ``metricsPath``. It writes nothing.
- ``ready()`` creates or migrates bronze and the facts table, runs the re-snapshot pre-flight and
  the bootstrap snapshot when asked, and returns the query's DataStreamWriter, not started.
- ``DataStreamWriter.start()`` starts it.

``to_delta`` takes the three steps at once. ``start_many`` checks every table's stream before it
makes any ready, and makes the next stream ready while Spark starts the source of the one before,
so a stream's table creation overlaps another's start instead of adding to it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql.types import StructType

from mssql_cdc import _core, backfill, bronze_sink, bronze_source, generations, tables
from mssql_cdc import bootstrap as bootstrap_snapshot
from mssql_cdc._glue import get_option, join, option_text, set_option, without_options
from mssql_cdc.errors import ConfigError
from mssql_cdc.metrics_dir import MetricsDir
from mssql_cdc.sink import sink_for
from mssql_cdc.source import NAME
from mssql_cdc.spark_checkpoint import SparkCheckpoint

if TYPE_CHECKING:
    from pyspark.sql.streaming import DataStreamWriter

    from mssql_cdc.types import OnDataLoss, SnapshotMode, SparkSessionLike

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


class StreamStart:
    """A to_delta stream checked and not yet started; see the module.

    `facts_ready`: the caller checks and creates the facts table (start_many, once for all its
    streams): it is then neither checked nor created here.
    """

    def __init__(
        self,
        spark: SparkSessionLike,
        options: Mapping[str, str],
        target: str,
        app_id: str,
        checkpoint: str,
        facts_table: str | None,
        *,
        trigger: Mapping[str, Any] | None,
        query_name: str | None,
        bootstrap: bool,
        on_data_loss: OnDataLoss,
        resnapshot_interval_days: float,
        snapshot_on_switch: bool,
        snapshot: SnapshotMode,
        facts_ready: bool = False,
    ) -> None:
        # Python's types become the parameters' text; the engine's rules for them (required,
        # values, combinations with the options) are checked in C++, as for a native stream.
        params = _stream_params(target=target, app_id=app_id, checkpoint=checkpoint, facts_table=facts_table,
                                bootstrap=bootstrap, on_data_loss=on_data_loss,
                                resnapshot_interval_days=resnapshot_interval_days,
                                snapshot_on_switch=snapshot_on_switch, snapshot=snapshot)
        if trigger is not None and not isinstance(trigger, Mapping):
            raise ConfigError(
                f'to_delta: trigger must be a mapping such as {{"availableNow": True}}, not {trigger!r}')
        options = dict(options)
        _core.validate_stream(options, params)
        self._spark = spark
        self._target, self._app_id, self._checkpoint, self._facts_table = target, app_id, checkpoint, facts_table
        self._trigger, self._query_name = trigger, query_name
        self._bootstrap, self._on_data_loss, self._snapshot = bootstrap, on_data_loss, snapshot
        self._days = float(resnapshot_interval_days)
        self._snapshot_on_switch = snapshot_on_switch

        self._target_table = tables.TableArg(target, "target")
        self._facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None
        tables.check_location(checkpoint, "checkpoint")
        spark_checkpoint = SparkCheckpoint(spark, checkpoint)
        spark_checkpoint.check_readable()
        # The engine parses every option (warning about unknown names) and resolves the capture
        # instance: errors here start nothing. Bronze is created as a native stream creates it.
        feed = _core.Feed(options)
        self._output_schema = feed.spark_schema_json()
        self.capture_instance = feed.capture_instance
        del feed
        bronze = tables.plan(spark, self._target_table, "bronze", output_schema_json=self._output_schema,
                             capture_instance=self.capture_instance)
        self._bronze_statements = bronze.statements
        self._facts_statements = (tables.prepare(spark, self._facts, "facts")
                                  if self._facts is not None and not facts_ready else None)
        if not bootstrap and bronze.exists and spark_checkpoint.last_processed() is None:
            # A fresh stream from the earliest change into a bronze other streams wrote.
            _core.check_fresh_start(options, tables.location(spark, self._target_table), app_id, target)
        # A metricsPath given is checked before anything is written; the default one, under the
        # checkpoint, is made only when delta_sink's route reads the stream (ready).
        self._metrics = metrics_location(options, checkpoint, app_id) if get_option(options, "metricsPath") else None
        self._options = options

    def ready(self, facts_location: str | None = None) -> DataStreamWriter:
        """Creates or migrates the tables, snapshots when asked; the query's writer, not started.
        `facts_location`: where the facts table is, when the caller knows (saves asking)."""
        spark, options, checkpoint, app_id = self._spark, dict(self._options), self._checkpoint, self._app_id
        target_table, facts, output_schema = self._target_table, self._facts, self._output_schema
        tables.ensure(spark, target_table, "bronze", output_schema_json=output_schema,
                      capture_instance=self.capture_instance, statements=self._bronze_statements)
        if self._facts_statements is not None:
            tables.ensure(spark, facts, "facts", statements=self._facts_statements)
        resnapshot = None
        generation = 0
        if self._on_data_loss == "resnapshot":
            # Generation n's checkpoint and sink id stand for the stream's; the pre-flight may
            # snapshot the table again and move on to generation n + 1 (mssql_cdc.generations).
            current, resnapshot = generations.preflight(spark, options, checkpoint, app_id, facts,
                                                        target_table.text, self._days)
            checkpoint, app_id, generation = current["checkpoint"], current["app_id"], current["generation"]
            if resnapshot is None and generation > 0:
                set_option(options, "startingLsn", current["snapshot_lsn"])
        if self._bootstrap and facts is not None and resnapshot is None:
            # One mode per run: an open snapshot of the other mode refuses the start.
            _core.check_mode_lock(backfill.snapshot_events(spark, facts, target_table.text), app_id,
                                  self._snapshot, f'to_delta(bootstrap=True, snapshot="{self._snapshot}")')
        lsn = None
        if resnapshot is not None:
            lsn = generations.resnapshot(spark, options, target_table, facts, resnapshot, self._snapshot,
                                         join(checkpoint, BOOTSTRAP_DIR), output_schema)
            set_option(options, "startingLsn", lsn)
        elif self._bootstrap and self._snapshot == "chunked":
            lsn = backfill.open_chunked(spark, options, target_table, facts, app_id, checkpoint, output_schema)
            if lsn is not None:
                set_option(options, "startingLsn", lsn)
                log.info("mssql_cdc: chunked snapshot of %s open at %s; the stream starts there and "
                         "backfill() reads the table", self.capture_instance, lsn)
        if self._bootstrap and lsn is None and not (self._on_data_loss == "resnapshot" and generation > 0):
            log.info("mssql_cdc: bootstrap of %s into %s", self.capture_instance, self._target)
            lsn = bootstrap_snapshot.run(spark, options, target_table, facts, app_id,
                                         join(checkpoint, BOOTSTRAP_DIR), output_schema)
            set_option(options, "startingLsn", lsn)
            log.info("mssql_cdc: bootstrap done; the stream starts after %s", lsn)
        return self._writer(options, checkpoint, app_id, facts_location)

    def _writer(self, options: dict[str, str], checkpoint: str, app_id: str,
                facts_location: str | None) -> DataStreamWriter:
        spark, target, facts_table = self._spark, self._target, self._facts_table
        locations = bronze_sink.route_locations(spark, self._target_table, self._facts, checkpoint,
                                                facts_location=facts_location)
        if locations is not None:
            # The bronze route (decision 0019): the tasks write bronze's files, the engine commits.
            bronze_location, facts_location = locations
            options = without_options(options, "metricsPath")
            route = {bronze_source.BRONZE_LOCATION: bronze_location, bronze_source.SPARK_CHECKPOINT: checkpoint,
                     bronze_source.CHANGE_SCHEMA: self._output_schema}
            frame = spark.readStream.format(bronze_source.NAME).options(**options, **route).load()
            sink = bronze_sink.bronze_route_sink(target, bronze_location, app_id, facts_table, facts_location,
                                                 options=options, snapshot_on_switch=self._snapshot_on_switch)
        else:
            metrics = self._metrics if self._metrics is not None else metrics_location(options, checkpoint, app_id)
            if metrics:
                set_option(options, "metricsPath", metrics)
            else:
                options = without_options(options, "metricsPath")
            schema = StructType.fromJson(json.loads(self._output_schema))
            frame = spark.readStream.format(NAME).schema(schema).options(**options).load()
            sink = sink_for(target, app_id, facts_table, metrics_path=metrics, options=options,
                            tables_ready=True, snapshot_on_switch=self._snapshot_on_switch)
        writer = (
            frame.writeStream.foreachBatch(sink)
            .option("checkpointLocation", checkpoint)
            .queryName(self._query_name or app_id)
        )
        if self._trigger:
            writer = writer.trigger(**dict(self._trigger))
        return writer


def metrics_location(options: Mapping[str, str], checkpoint: str, app_id: str) -> str | None:
    """The stream's metrics directory, opened and written once (see mssql_cdc.pipeline); None
    without one."""
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
