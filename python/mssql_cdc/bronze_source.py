"""``format("mssql_cdc_bronze")``: the source of ``to_delta``'s bronze route (decision 0019).

The planner is ``format("mssql_cdc")``'s, unchanged (``mssql_cdc.source``). What differs is what
a task does with its range: it reads the range and writes its rows into bronze's data files
itself (``_core.write_range_to_bronze``), and hands Spark one row saying which files it wrote,
what their rows hold and what the read measured. The change rows never cross into the JVM, and
the sink (``mssql_cdc.bronze_sink``) names every range's files in one bronze commit.

Each row has two columns: ``range`` (the range's document, or NULL) and ``batch`` (on one row of
each batch, the planned batch: its offsets, its Spark batch id, the range cleanup skipped, its
schema events and, for a batch that reads no range, its measures). A batch that reads no range
still has one task, which hands over the planned batch alone, so the sink never needs files from
the planner.

Rows carry ``_batch_id``, Spark's batch id, which the planner reads from the query's offset log:
Spark writes ``offsets/<n>`` before it plans batch n, so the newest entry whose offset is the
batch's end is the batch. The checkpoint must be a local (or Volume) path for that; ``to_delta``
takes this route only then.

Options of its own (not source options, removed before the engine sees them):
``bronzeLocation`` (where bronze's files are), ``sparkCheckpoint`` (the query's checkpoint) and
``changeSchema`` (the change rows' schema ``to_delta`` inferred, as ``format("mssql_cdc")`` is told it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from mssql_cdc import _core
from mssql_cdc._glue import get_option, without_options
from mssql_cdc.errors import ConfigError
from mssql_cdc.source import LsnRange, MssqlCdcDataSource, MssqlCdcStreamReader
from mssql_cdc.spark_checkpoint import SparkCheckpoint

NAME = "mssql_cdc_bronze"
BRONZE_LOCATION = "bronzeLocation"
SPARK_CHECKPOINT = "sparkCheckpoint"
CHANGE_SCHEMA = "changeSchema"
SCHEMA = "`range` STRING, `batch` STRING"
_ARROW_SCHEMA = pa.schema([("range", pa.string()), ("batch", pa.string())])


class BronzeRange(LsnRange):
    """A range of a batch (or, with no LSNs, a batch that reads no range), with where its rows go."""

    def __init__(self, options: dict[str, str], from_lsn: str | None, to_lsn: str | None, last: bool,
                 capture_instance: str, schema_json: str | None, bronze: str, batch_id: int, part: int,
                 batch: str | None) -> None:
        super().__init__(options, from_lsn or "", to_lsn or "", last, capture_instance, schema_json)
        self.bronze = bronze
        self.batch_id = batch_id
        self.part = part
        self.batch = batch  # the planned batch's JSON, on the batch's last partition


class BronzeStreamReader(MssqlCdcStreamReader):
    """``format("mssql_cdc")``'s reader whose tasks write bronze's files; see the module."""

    def __init__(self, options: dict[str, str], schema_json: str, bronze: str, checkpoint: str) -> None:
        super().__init__(options, schema_json)
        self._metrics = None  # the planned batch travels with its last task instead
        self._bronze = bronze
        self._checkpoint = checkpoint

    def partitions(self, start: dict, end: dict) -> list[BronzeRange]:
        feed = self._get_feed()
        start_json, end_json = json.dumps(start), json.dumps(end)
        ranges = feed.partitions(start_json, end_json)
        batch_id = SparkCheckpoint(None, self._checkpoint).batch_ending_at(end)
        skipped = feed.skipped_range(start_json)
        batch = json.dumps({
            "start": start_json, "end": end_json, "batch_id": batch_id,
            "skipped": list(skipped) if skipped else None,
            "metrics": None if ranges else feed.empty_read_metrics(start_json, end_json),
            "events": feed.schema_events(start_json, end_json)})
        if not ranges:
            return [BronzeRange(self._options, None, None, True, "", self._schema_json, self._bronze, batch_id, 0,
                                batch)]
        last = len(ranges) - 1
        return [BronzeRange(self._options, from_lsn, to_lsn, i == last, instance, self._schema_json, self._bronze,
                            batch_id, i, batch if i == last else None)
                for i, (from_lsn, to_lsn, instance) in enumerate(ranges)]

    def read(self, partition: BronzeRange) -> Iterator[pa.RecordBatch]:
        document = None
        if partition.from_lsn:
            document = _core.write_range_to_bronze(
                partition.options, partition.from_lsn, partition.to_lsn, measure_end=partition.last,
                capture_instance=partition.capture_instance, schema=partition.schema_json,
                bronze_uri=partition.bronze, batch_id=partition.batch_id, part=partition.part)
        yield pa.RecordBatch.from_arrays([pa.array([document], pa.string()), pa.array([partition.batch], pa.string())],
                                         schema=_ARROW_SCHEMA)


class BronzeDataSource(MssqlCdcDataSource):
    """``format("mssql_cdc_bronze")``; see the module."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: StructType) -> BronzeStreamReader:
        options = self._source_options()
        route = [get_option(options, name) for name in (BRONZE_LOCATION, SPARK_CHECKPOINT, CHANGE_SCHEMA)]
        if not all(route):
            raise ConfigError(f'format("{NAME}") is to_delta\'s own source; read format("mssql_cdc") instead')
        options = without_options(options, BRONZE_LOCATION, SPARK_CHECKPOINT, CHANGE_SCHEMA, "metricsPath")
        bronze, checkpoint, change_schema = route
        return BronzeStreamReader(options, change_schema, bronze, checkpoint)


def register(spark: Any, cores: int) -> None:
    """Registers ``format("mssql_cdc_bronze")`` with `cores` standing for numPartitions=auto."""
    source = type("BronzeDataSourceOfSession", (BronzeDataSource,), {"default_num_partitions": cores})
    spark.dataSource.register(source)
