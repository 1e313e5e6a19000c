"""Spark sessions for the API: ``get_spark`` finds or builds one, ``available_cores`` probes its
cores (the package's one use of ``sparkContext``, which a Spark Connect session refuses)."""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING

from mssql_cdc.types import SparkSessionLike

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def available_cores(spark: SparkSessionLike) -> int:
    """The session's default parallelism; 0 where it cannot be read (Spark Connect)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 (any failure means: unknown)
        return 0


def get_spark(app_name: str = "mssql-cdc", master: str = "local[*]", *, delta: bool = True) -> SparkSession:
    """The active Spark session; else a Spark Connect session when ``SPARK_REMOTE`` is set; else a
    new local session in UTC with 4 shuffle partitions, and Delta configured when `delta` and
    delta-spark is importable."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if os.environ.get("SPARK_REMOTE"):
        return SparkSession.builder.remote(os.environ["SPARK_REMOTE"]).appName(app_name).getOrCreate()
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "4")
    )
    if delta and importlib.util.find_spec("delta") is not None:
        from delta import configure_spark_with_delta_pip

        builder = configure_spark_with_delta_pip(
            builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    return builder.getOrCreate()
