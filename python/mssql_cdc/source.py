"""The Spark data source ``format("mssql_cdc")``: SQL Server CDC as a stream of change rows.

Every decision is the engine's (``mssql_cdc._core``); this module only fits it to PySpark's
Python streaming data source API (4.2, admission control and Trigger.AvailableNow):

- on the driver, one ``_core.Feed`` per reader, created on first use and never pickled, answers
  ``initialOffset`` (``startingLsn``), ``latestOffset`` (where the next batch ends under
  ``maxCommitsPerBatch``, with the retention check), ``reportLatestOffset`` (the max LSN) and
  ``partitions`` (the commit-aligned split of the range);
- on the executors, ``read`` hands Spark the Arrow record batches of ``_core.read_range`` as
  they come; the partition carries everything it needs (the options and the LSN range), since
  Spark pickles the reader at query start and never updates the executors' copy.

Offsets are the engine's ``{"lsn", "commit_ts"}`` JSON. ``maxCommitsPerBatch`` is the default
read limit (``ReadMaxRows``); without it every batch reads all that is available. With a
``metricsPath`` option (a path or a URI ``pyarrow.fs`` opens; ``dbfs:/`` is refused with a
ValueError at query start) the planner records each planned batch there and each task what
its read measured, for the sink's facts row (``mssql_cdc.handoff``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from mssql_cdc import OPERATIONS, _core, handoff, snapshot_source  # noqa: F401 (OPERATIONS: exported here too)
from mssql_cdc.events import CAPTURE_INSTANCE_SWITCHED, DATA_SKIPPED, SCHEMA_CHANGE  # noqa: F401 (exported)
from mssql_cdc.lsn import ZERO_LSN  # noqa: F401 (exported here too)
from mssql_cdc._glue import get_option, set_option
from mssql_cdc.metrics_dir import MetricsDir
from mssql_cdc.spark import available_cores
from mssql_cdc.snapshot_source import MssqlCdcSnapshotDataSource, MssqlCdcSnapshotReader  # noqa: F401 (exported)
from mssql_cdc.types import SourceOptions, SparkSessionLike  # noqa: F401 (SourceOptions: exported here too)

NAME = "mssql_cdc"

# The source's constants, as the reference library's ``source`` module names them, each the
# engine's: the option names (lower case, as options are matched), the metadata columns of
# change rows with their Spark SQL types, the column names no source column may have, the
# values of schemaChangePolicy and isolationLevel.
KNOWN_OPTIONS = frozenset(_core.option_name_key(name) for name in _core.source_option_names())
METADATA_COLUMNS = [tuple(column) for column in _core.metadata_columns()]
RESERVED_COLUMNS = frozenset(_core.reserved_column_names())
SCHEMA_CHANGE_POLICIES = tuple(_core.schema_change_policies())
# isolationLevel's values (lower case) -> the isolation a snapshot read asks SQL Server for;
# None: none asked, the connection's default (read committed).
ISOLATION_LEVELS = {_core.option_name_key(level): asked for level, asked in _core.isolation_levels()}
# The data source uses PySpark's admission control (ReadAllAvailable, ReadMaxRows and
# SupportsTriggerAvailableNow, Spark 4.2), imported above: wherever this module loads, it is there.
HAS_ADMISSION_CONTROL = True


def spark_schema(options: Mapping[str, str]) -> StructType:
    """The stream's schema as the engine infers it (opens the source once)."""
    return StructType.fromJson(json.loads(_core.Feed(dict(options)).spark_schema_json()))


class LsnRange(InputPartition):
    """One commit-aligned range [from_lsn, to_lsn] of a batch, read by one Spark task; the
    batch's last range also measures the batch's end."""

    def __init__(self, options: dict[str, str], from_lsn: str, to_lsn: str, last: bool = False,
                 capture_instance: str = "", schema_json: str | None = None) -> None:
        super().__init__((from_lsn, to_lsn))
        self.options = options
        self.from_lsn = from_lsn
        self.to_lsn = to_lsn
        self.last = last
        self.capture_instance = capture_instance  # the instance serving the range
        self.schema_json = schema_json  # the schema the query was told

    def __repr__(self) -> str:
        return f"LsnRange({self.capture_instance}, {self.from_lsn}, {self.to_lsn})"


class MssqlCdcStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The stream reader; see the module docstring for what runs where."""

    def __init__(self, options: dict[str, str], schema_json: str | None = None) -> None:
        self._options = options
        self._schema_json = schema_json  # the query's schema: fixed while it runs
        self._feed: Any = None  # _core.Feed, driver only
        self._initial: dict | None = None
        self._available_now = False
        self._target: str | None = None  # offset JSON of the availableNow target
        metrics = get_option(options, "metricsPath")
        self._metrics = MetricsDir(metrics) if metrics else None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_feed"] = None  # executors never plan; the feed holds a source connection
        return state

    def _get_feed(self) -> Any:
        if self._feed is None:
            self._feed = _core.Feed(self._options, self._schema_json)
        return self._feed

    # ---- driver side
    def initialOffset(self) -> dict:
        # Spark asks twice at the first start; the answer must not move in between
        # (startingLsn=latest follows the max LSN).
        if self._initial is None:
            self._initial = json.loads(self._get_feed().initial_offset())
        return self._initial

    def getDefaultReadLimit(self) -> ReadLimit:
        self._get_feed()  # validates the options first
        max_commits = get_option(self._options, "maxCommitsPerBatch")
        return ReadMaxRows(int(max_commits)) if max_commits else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True
        self._target = self._get_feed().max_offset()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        if self._available_now and self._target is None:
            return start  # nothing was captured when the run began
        max_commits = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        end = self._get_feed().latest_offset(json.dumps(start), max_commits, self._target)
        return json.loads(end)

    def reportLatestOffset(self) -> dict | None:
        latest = self._get_feed().max_offset()
        return None if latest is None else json.loads(latest)

    def partitions(self, start: dict, end: dict) -> list[LsnRange]:
        feed = self._get_feed()
        start_json, end_json = json.dumps(start), json.dumps(end)
        ranges = feed.partitions(start_json, end_json)
        if self._metrics is not None:
            # A batch that reads no range is measured here, as there is no task to do it.
            empty = None if ranges else feed.empty_read_metrics(start_json, end_json)
            handoff.write(self._metrics, start_json, end_json, feed.skipped_range(start_json), empty,
                          feed.schema_events(start_json, end_json))
        last = len(ranges) - 1
        return [LsnRange(self._options, from_lsn, to_lsn, i == last, instance, self._schema_json)
                for i, (from_lsn, to_lsn, instance) in enumerate(ranges)]

    def commit(self, end: dict) -> None:
        pass  # Spark commits late and not at all at the end of a run: nothing depends on it

    # ---- executor side
    def read(self, partition: LsnRange) -> Iterator[pa.RecordBatch]:
        # Iterated directly (not through pyarrow's C stream import), so that a failure keeps
        # the engine's error class, e.g. DataLossError when cleanup passed the range meanwhile.
        reading = _core.read_range(partition.options, partition.from_lsn, partition.to_lsn,
                                   measure_end=partition.last,
                                   capture_instance=partition.capture_instance,
                                   schema=partition.schema_json)
        yield from reading
        if self._metrics is not None:
            handoff.write_range(self._metrics, reading.metrics_json())


class MssqlCdcDataSource(DataSource):
    """``format("mssql_cdc")``: the change rows of one capture instance, as a stream.

    ``default_num_partitions`` is the Spark session's cores, set by ``register``; it stands
    for ``numPartitions=auto`` (0: let the engine decide).
    """

    default_num_partitions: int = 0

    @classmethod
    def name(cls) -> str:
        return NAME

    def _source_options(self) -> dict[str, str]:
        options = {k: str(v) for k, v in self.options.items()}
        partitions = get_option(options, "numPartitions")
        if self.default_num_partitions > 0 and (partitions is None or partitions.strip().lower() == "auto"):
            set_option(options, "numPartitions", str(self.default_num_partitions))
        return options

    def schema(self) -> StructType:
        return spark_schema(self._source_options())

    def streamReader(self, schema: StructType) -> MssqlCdcStreamReader:
        return MssqlCdcStreamReader(self._source_options(), schema.json())


def register(spark: SparkSessionLike) -> None:
    """Registers ``format("mssql_cdc")``, ``format("mssql_cdc_snapshot")`` and
    ``format("mssql_cdc_bronze")`` on `spark`, with the session's cores for numPartitions=auto."""
    cores = available_cores(spark)
    # A class of its own, not importable by name, so Spark pickles it by value, cores included.
    source = type("MssqlCdcDataSourceOfSession", (MssqlCdcDataSource,), {"default_num_partitions": cores})
    spark.dataSource.register(source)
    snapshot_source.register(spark, cores)
    from mssql_cdc import bronze_source  # it builds on this module's reader

    bronze_source.register(spark, cores)
