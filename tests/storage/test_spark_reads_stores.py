"""Spark with the Delta jars reads what the native engine wrote to an object store: bronze,
facts and control tables in moto's S3 server (as s3a://, through Hadoop's S3A) and in Azurite
(as abfs://, through Hadoop's ABFS), equal to what delta-rs reads and to the change tables."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from azure_emulator import ACCOUNT, AzureEmulator  # noqa: E402
from local_spark import local_spark  # noqa: E402
from s3_emulator import S3Emulator  # noqa: E402
from store_helpers import (TABLES, bronze_keys, change_table_keys, make_db, run,  # noqa: E402
                           summary, write_pipeline)

# How the engine names a place, and how Spark's Hadoop connector does.
STORES = {
    "s3": (S3Emulator, lambda place: f"s3://{place}", lambda place: f"s3a://{place}"),
    "azure": (AzureEmulator, lambda place: f"az://{place}",
              lambda place: f"abfs://{place}@{ACCOUNT}.dfs.core.windows.net"),
}


@pytest.mark.parametrize("store_name", sorted(STORES))
def test_spark_reads_the_tables_the_engine_wrote(store_name, tmp_path):
    make, engine_root, spark_root = STORES[store_name]
    store = make()
    spark = None
    try:
        store.create("spark-lake")
        db = make_db(store, tmp_path, transactions=60)
        pipeline = write_pipeline(tmp_path, engine_root("spark-lake"))
        assert summary(run(store, "run", "--json", pipeline))["failed"] == []
        spark = local_spark(f"spark-reads-{store_name}", tmp_path / "warehouse",
                            extra_conf=store.spark_conf())
        root = spark_root("spark-lake")
        for ci in TABLES:
            rows = spark.read.format("delta").load(f"{root}/lake/bronze/{ci}") \
                .where("_operation != 0").select("_start_lsn", "_seqval", "_operation").collect()
            keys = sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in rows)
            assert keys == sorted(bronze_keys(store, engine_root("spark-lake"), ci)), ci
            assert keys == sorted(change_table_keys(db, ci)), ci
        facts = spark.read.format("delta").load(f"{root}/lake/ops/facts")
        assert facts.where("event IS NULL").count() >= len(TABLES)
        control = spark.read.format("delta").load(f"{root}/lake/ops/control")
        assert control.count() >= 1
    finally:
        if spark is not None:
            # Hadoop's filesystems close while the emulator still answers, or the JVM's
            # shutdown hook waits for them.
            spark._jvm.org.apache.hadoop.fs.FileSystem.closeAll()
            spark.stop()
        store.stop()
