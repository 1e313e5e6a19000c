"""Fixtures for the Spark mode tests: one local Spark (local[2]) with Delta for the whole test
session (jars from scripts/setup_spark.sh), a check that no test leaves a query running, and a
simulated shop database per test (spark_helpers.py)."""

import os
from pathlib import Path

import pytest

from local_spark import connect_server, local_spark
from spark_helpers import make_shop


# MSSQL_CDC_TEST_SPARK=connect runs the suite through a local Spark Connect server
# (scripts/test.sh runs it both ways).
MODE = os.environ.get("MSSQL_CDC_TEST_SPARK", "classic")


def pytest_collection_modifyitems(config, items):
    """Every test here is marked `spark`. Through Spark Connect, only the tests marked `connect`
    run: those whose behaviour differs there (README.md in this folder says which and why)."""
    here = Path(__file__).parent
    mine = [item for item in items if here in item.path.parents]
    for item in mine:
        item.add_marker(pytest.mark.spark)
    if MODE != "connect":
        return
    not_rerun = [item for item in mine if item.get_closest_marker("connect") is None]
    if not_rerun:
        config.hook.pytest_deselected(items=not_rerun)
        items[:] = [item for item in items if item not in not_rerun]


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local Spark with Delta and a Hive metastore for every test of this folder: a classic
    session, or a Spark Connect session on a local server."""
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    if MODE == "connect":
        from pyspark.sql import SparkSession

        with connect_server(warehouse, driver_memory="2g", snapshot_partitions=1, hive=True) as url:
            session = SparkSession.builder.remote(url).getOrCreate()
            yield session
            for query in session.streams.active:
                query.stop()
            session.stop()
        return
    assert MODE == "classic", f"MSSQL_CDC_TEST_SPARK={MODE!r}: classic or connect"
    session = local_spark("mssql-cdc-spark-tests", warehouse, driver_memory="2g", snapshot_partitions=1, hive=True)
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




@pytest.fixture
def guide_tables(spark):
    """Schemas bronze and ops, empty, and no checkpoint under /Volumes/main/ops/checkpoints: the
    names the guide's examples use, exactly as written; dropped again afterwards."""
    import shutil

    from spark_helpers import GUIDE_CHECKPOINTS, guide_checkpoints_held, reset_guide_tables

    with guide_checkpoints_held():
        reset_guide_tables(spark)
        yield
        for schema in ("bronze", "ops"):
            spark.sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        shutil.rmtree(GUIDE_CHECKPOINTS, ignore_errors=True)
