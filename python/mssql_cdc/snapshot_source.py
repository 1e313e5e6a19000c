"""The Spark data source ``format("mssql_cdc_snapshot")``: a capture instance's source table as
a batch of operation-0 rows (docs/snapshots.md, docs/reference/options.md).

Every decision is the engine's (``engine/snapshot_scan.h``): on the driver, ``partitions``
plans the scan (the stamp recorded before any row is read, or ``snapshotLsn``; the key ranges of
``snapshotChunks``, or those a full snapshot cuts the table into, at most ``numPartitions``);
each task reads one range through a connection of its own. Every action plans anew, so it
reads the table afresh with a new stamp unless ``snapshotLsn`` is given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from mssql_cdc import _core
from mssql_cdc._glue import get_option
from mssql_cdc.spark import available_cores

NAME = "mssql_cdc_snapshot"


def partitions(options: dict[str, str], cores: int) -> int:
    """The ranges a snapshot is read in at most: numPartitions, or for ``auto`` the session's
    `cores` (0: unknown, then the machine's CPUs)."""
    given = get_option(options, "numPartitions")
    if given is not None and given.strip().lower() != "auto":
        return int(given)  # checked by the engine with every other option
    return cores or os.cpu_count() or 1


def partitions_of(spark: Any, options: dict[str, str]) -> int:
    """`partitions` with the cores of `spark`."""
    return partitions(options, available_cores(spark))


class SnapshotRange(InputPartition):
    """Range `index` of a planned scan, read by one Spark task."""

    def __init__(self, options: dict[str, str], scan: str, index: int) -> None:
        super().__init__(index)
        self.options = options
        self.scan = scan
        self.index = index


class MssqlCdcSnapshotReader(DataSourceReader):
    def __init__(self, options: dict[str, str], partitions: int) -> None:
        self._options = options
        self._partitions = partitions

    def partitions(self) -> list[SnapshotRange]:
        scan = _core.plan_snapshot(self._options, self._partitions)
        count = len(json.loads(scan)["ranges"])
        return [SnapshotRange(self._options, scan, i) for i in range(count)]

    def read(self, partition: SnapshotRange) -> Iterator[pa.RecordBatch]:
        # Iterated directly, so that a failure keeps the engine's error class.
        yield from _core.read_snapshot_range(partition.options, partition.scan, partition.index)


class MssqlCdcSnapshotDataSource(DataSource):
    """``format("mssql_cdc_snapshot")``: the current rows of one capture instance's table.

    ``default_num_partitions`` is the Spark session's cores, set by ``register``; it stands
    for ``numPartitions=auto`` (0: the machine's CPUs).
    """

    default_num_partitions: int = 0

    @classmethod
    def name(cls) -> str:
        return NAME

    def _source_options(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.options.items()}

    def _partitions(self) -> int:
        return partitions(self._source_options(), self.default_num_partitions)

    def schema(self) -> StructType:
        return StructType.fromJson(json.loads(_core.snapshot_schema_json(self._source_options())))

    def reader(self, schema: StructType) -> MssqlCdcSnapshotReader:
        return MssqlCdcSnapshotReader(self._source_options(), self._partitions())


def register(spark: Any, cores: int) -> None:
    """Registers ``format("mssql_cdc_snapshot")`` with `cores` standing for numPartitions=auto."""
    source = type("MssqlCdcSnapshotDataSourceOfSession", (MssqlCdcSnapshotDataSource,),
                  {"default_num_partitions": cores})
    spark.dataSource.register(source)
