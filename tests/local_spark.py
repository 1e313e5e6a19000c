"""A local Spark with Delta for the tests (tests/delta, tests/spark): the Delta jars fetched once
and cached by scripts/setup_spark.sh, and one session configuration, local[2] on 127.0.0.1."""

import glob
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


def local_spark(app_name, warehouse, *, driver_memory="1g", snapshot_partitions=2, hive=False):
    """A new local[2] SparkSession with Delta, its warehouse and Derby home in `warehouse`.

    With `hive`, the session's catalog is a Hive metastore in an embedded Derby database under
    `warehouse`, so that a later session (in another process, once this one stopped) finds the
    tables by name.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder
    if hive:
        builder = builder.enableHiveSupport().config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true")
    session = (
        builder.master("local[2]")
        .appName(app_name)
        .config("spark.jars", ",".join(spark_jars()))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.databricks.delta.snapshotPartitions", str(snapshot_partitions))
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session
