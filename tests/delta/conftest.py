"""Fixtures for the Delta interop tests: tables written by the engine (mssql_cdc._core), read
back by two independent readers, delta-rs (the ``deltalake`` package) and Spark with
delta-spark (jars fetched by scripts/setup_spark.sh)."""

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def core():
    from mssql_cdc import _core

    return _core


def spark_jars():
    """The Delta jars; fetched (once, cached) by scripts/setup_spark.sh."""
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup_spark.sh")], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise RuntimeError(f"scripts/setup_spark.sh failed:\n{result.stderr}")
    folder = result.stdout.strip().splitlines()[-1]
    jars = sorted(glob.glob(os.path.join(folder, "*.jar")))
    if not any(Path(j).name.startswith("delta-spark_") for j in jars):
        raise RuntimeError(f"no delta-spark jar in {folder}")
    return jars


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """A local Spark with Delta, one per test module."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("mssql-cdc-delta-interop")
        .config("spark.jars", ",".join(spark_jars()))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
