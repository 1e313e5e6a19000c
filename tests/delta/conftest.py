"""Fixtures for the Delta interop tests: tables written by the engine (mssql_cdc._core), read
back by two independent readers, delta-rs (the ``deltalake`` package) and Spark with
delta-spark (jars fetched by scripts/setup_spark.sh)."""

import pytest

from local_spark import local_spark


@pytest.fixture(scope="session")
def core():
    from mssql_cdc import _core

    return _core


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """A local Spark with Delta, one per test module."""
    session = local_spark("mssql-cdc-delta-interop", tmp_path_factory.mktemp("spark-warehouse"))
    yield session
    session.stop()
