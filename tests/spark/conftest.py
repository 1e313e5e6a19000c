"""Fixtures for the Spark mode tests: one local Spark (local[2]) with Delta for the whole test
session (jars from scripts/setup_spark.sh), a check that no test leaves a query running, and a
simulated shop database per test (spark_helpers.py)."""

import os
import sys

import pytest

from spark_helpers import make_shop, spark_jars


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local Spark with Delta for every test of this folder."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("mssql-cdc-spark-tests")
        .config("spark.jars", ",".join(spark_jars()))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture(autouse=True)
def no_query_left_running(request):
    """Every test stops its queries; a leftover one would hold its checkpoint and cores."""
    yield
    if "spark" in request.fixturenames:
        session = request.getfixturevalue("spark")
        left = session.streams.active
        for query in left:
            query.stop()
        session.streams.resetTerminated()
        assert not left, f"queries left running: {[q.name for q in left]}"


@pytest.fixture
def shop(cli, tmp_path):
    """A simulated shop database on a manual clock with the demo schema and 200 transactions."""
    return make_shop(cli, tmp_path)


