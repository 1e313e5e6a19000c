"""The bootstrap snapshot on Spark: the engine's bootstrap (engine/bootstrap.h), its writes made
through the session, so that a named bronze table is written through its catalog and a path one
by Spark's Delta writer, as the sink writes every batch.

The engine decides everything else as for a native stream: the snapshot LSN recorded under the
checkpoint before the read, a retake at the same LSN after a crash, nothing written twice (each
append carries its txn: ``<app_id>#snapshot`` for bronze, ``<app_id>#events`` for the facts
row), and the offset the stream starts after.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from mssql_cdc import _core, snapshot_source, tables
from mssql_cdc._glue import set_option, without_options


def _struct(schema_json: str) -> StructType:
    return StructType.fromJson(json.loads(schema_json))


def snapshot_frame(spark: Any, options: Mapping[str, str], plan: Mapping[str, Any],
                   bronze_schema: StructType, *, snapshot: str | None = None) -> Any:
    """The snapshot the engine planned (``{"lsn", "keys", "chunks"}``, and the
    ``capture_instance`` to read through when it names one) as a DataFrame in bronze's
    schema, read by Spark's tasks a range each through ``format("mssql_cdc_snapshot")``, its rows
    stamped ``lsn``. ``snapshot``: the S of a chunked snapshot's wave, whose rows keep their
    ``_chunk``; otherwise ``_snapshot`` is the stamp and ``_chunk`` NULL."""
    read = without_options(options, "snapshotChunks", "snapshotKeys", "snapshotLsn")
    read["snapshotLsn"] = plan["lsn"]
    if plan.get("capture_instance"):
        # The instance the engine reads the table through: the newest, with the current columns.
        set_option(read, "captureInstance", plan["capture_instance"])
    if plan["chunks"]:
        read["snapshotKeys"] = json.dumps(plan["keys"])
        read["snapshotChunks"] = json.dumps(plan["chunks"])
    frame = spark.read.format(snapshot_source.NAME).options(**read).load()
    added = {"_batch_id": F.lit(None), "_snapshot": F.lit(snapshot or plan["lsn"])}
    if snapshot is None:
        added["_chunk"] = F.lit(None)
    read_columns = {name.lower() for name in frame.columns}

    def column(name: str) -> Any:
        if name in added:
            return added[name]
        # A column of bronze the instance read does not capture (an older instance's) is NULL.
        return F.col(name) if name.lower() in read_columns else F.lit(None)

    return frame.select(*[column(field.name).cast(field.dataType).alias(field.name)
                          for field in bronze_schema.fields])


class SparkBootstrapTables:
    """The writes of one bootstrap, called by the engine (``_core.bootstrap_into``)."""

    def __init__(self, spark: Any, options: Mapping[str, str], bronze: tables.TableArg,
                 facts: tables.TableArg | None, output_schema_json: str) -> None:
        self._spark = spark
        self._options = dict(options)
        self._bronze = bronze
        self._facts = facts
        self._bronze_schema = _struct(_core.bronze_schema_json(output_schema_json))

    @property
    def bronze_schema(self) -> StructType:
        return self._bronze_schema

    def snapshot_rows(self, lsn: str) -> int:
        return tables.read(self._spark, self._bronze).where(F.col("_snapshot") == lsn).count()

    def holds_snapshot(self, lsn: str) -> bool:
        return self.snapshot_rows(lsn) > 0

    def find_snapshot(self, instances: list[str]) -> tuple[str, bool] | None:
        """The newest snapshot of the table in bronze (operation-0 rows of any of `instances`,
        ignoring case): (its LSN, whether it is chunked), or None."""
        names = [name.lower() for name in instances]
        rows = (tables.read(self._spark, self._bronze)
                .where((F.col("_operation") == 0) & F.lower("_capture_instance").isin(names))
                .select(F.coalesce("_snapshot", "_start_lsn").alias("lsn"),
                        F.col("_chunk").isNotNull().alias("chunked"))
                .orderBy(F.desc("lsn")).limit(1).collect())
        return (rows[0]["lsn"], bool(rows[0]["chunked"])) if rows else None

    def append_snapshot(self, plan_json: str, txn_app_id: str, txn_version: int,
                        user_metadata: str) -> None:
        frame = snapshot_frame(self._spark, self._options, json.loads(plan_json), self._bronze_schema)
        tables.append(frame, self._bronze, txn_app_id=txn_app_id, txn_version=txn_version,
                      user_metadata=user_metadata)

    def append_facts(self, batch: pa.RecordBatch, txn_app_id: str, txn_version: int) -> None:
        assert self._facts is not None
        frame = self._spark.createDataFrame(pa.Table.from_batches([batch]),
                                            schema=_struct(_core.facts_schema_json()))
        tables.append(frame, self._facts, txn_app_id=txn_app_id, txn_version=txn_version)


def run(spark: Any, options: Mapping[str, str], bronze: tables.TableArg, facts: tables.TableArg | None,
        app_id: str, state_dir: str, output_schema_json: str) -> str:
    """Takes (or finds) the bootstrap snapshot; returns the LSN the stream starts after."""
    writer = SparkBootstrapTables(spark, options, bronze, facts, output_schema_json)
    offset = _core.bootstrap_into(dict(options), writer, bronze.text, app_id, state_dir,
                                  facts.text if facts is not None else None)
    return json.loads(offset)["lsn"]
