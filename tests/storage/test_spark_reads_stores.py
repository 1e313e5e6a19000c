"""Spark with the Delta jars reads what the native engine wrote to an object store: bronze,
facts and control tables in moto's S3 server, read as s3a:// through Hadoop's S3A
(scripts/spark-jars), equal to what delta-rs reads and to the change tables."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from local_spark import local_spark  # noqa: E402
from s3_emulator import S3Emulator  # noqa: E402
from store_helpers import (TABLES, bronze_keys, change_table_keys, make_db, run,  # noqa: E402
                           summary, write_pipeline)


@pytest.fixture(scope="module")
def s3():
    emulator = S3Emulator()
    yield emulator
    emulator.stop()


def test_spark_reads_the_s3_tables_the_engine_wrote(s3, tmp_path):
    s3.create("spark-lake")
    db = make_db(s3, tmp_path, transactions=60)
    pipeline = write_pipeline(tmp_path, "s3://spark-lake")
    assert summary(run(s3, "run", "--json", pipeline))["failed"] == []
    spark = local_spark("spark-reads-s3", tmp_path / "warehouse", extra_conf=s3.spark_conf())
    try:
        for ci in TABLES:
            rows = spark.read.format("delta").load(f"s3a://spark-lake/lake/bronze/{ci}") \
                .where("_operation != 0").select("_start_lsn", "_seqval", "_operation").collect()
            keys = sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in rows)
            assert keys == sorted(bronze_keys(s3, "s3://spark-lake", ci)), ci
            assert keys == sorted(change_table_keys(db, ci)), ci
        facts = spark.read.format("delta").load("s3a://spark-lake/lake/ops/facts")
        assert facts.where("event IS NULL").count() >= len(TABLES)
        control = spark.read.format("delta").load("s3a://spark-lake/lake/ops/control")
        assert control.count() >= 1
    finally:
        spark.stop()
