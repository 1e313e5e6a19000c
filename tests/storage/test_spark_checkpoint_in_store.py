"""A Spark checkpoint in an object store (moto's S3 server, as s3a://) gets the checks a local one
gets before `to_delta` writes anything: an offsets entry this release cannot read is refused
naming the file, and a new stream starting from the earliest change into a bronze table another
stream wrote is refused unless told where to start. The checkpoint is read through Spark's own
file systems, the ones the query writes it with."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from local_spark import local_spark  # noqa: E402
from s3_emulator import S3Emulator  # noqa: E402
from store_helpers import make_db  # noqa: E402


def local_files(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def s3_spark(tmp_path):
    store = S3Emulator()
    spark = None
    try:
        store.create("lake")
        spark = local_spark("checkpoint-in-s3", tmp_path / "warehouse", extra_conf=store.spark_conf())
        yield store, spark
    finally:
        if spark is not None:
            # Hadoop's filesystems close while the emulator still answers, or the JVM's
            # shutdown hook waits for them.
            spark._jvm.org.apache.hadoop.fs.FileSystem.closeAll()
            spark.stop()
        store.stop()


def test_a_checkpoint_in_an_object_store_is_checked_before_anything_is_written(s3_spark, tmp_path):
    from mssql_cdc import stream
    from mssql_cdc.errors import ConfigError

    store, spark = s3_spark
    db = make_db(store, tmp_path, transactions=40)
    options = {"backend": "sim", "simPath": str(db), "captureInstance": "dbo_orders"}
    lake = tmp_path / "lake"

    def start(app_id, **more):
        query = stream(spark, dict(options, **more)).to_delta(
            f"{lake}/bronze", app_id, f"s3a://lake/checkpoints/{app_id}", f"{lake}/facts",
            trigger={"availableNow": True})
        query.awaitTermination()
        assert query.exception() is None

    def keys():
        return sorted(store.keys("lake"))

    start("orders-v1")
    offsets = [k for k in keys() if k.startswith("checkpoints/orders-v1/offsets/") and k.rsplit("/", 1)[1].isdigit()]
    newest = max(offsets, key=lambda k: int(k.rsplit("/", 1)[1]))
    kept = store.client().get_object(Bucket="lake", Key=newest)["Body"].read().decode()
    assert kept.splitlines()[0] == "v1"
    before = (local_files(lake), keys())

    # An offsets entry of another version, and one whose source offset is not this source's.
    for damaged, says in [("v9\n" + kept.split("\n", 1)[1], "an offset log entry of version 'v9'"),
                          ("\n".join(kept.splitlines()[:2] + ['{"offset": 12}']) + "\n",
                           "holds a source offset this release does not read")]:
        store.client().put_object(Bucket="lake", Key=newest, Body=damaged.encode())
        with pytest.raises(ConfigError, match=says) as refused:
            start("orders-v1")
        assert newest.rsplit("/", 2)[1] + "/" in str(refused.value) and "give a new checkpoint" in str(refused.value)
        assert (local_files(lake), keys()) == before
    store.client().put_object(Bucket="lake", Key=newest, Body=kept.encode())
    start("orders-v1")

    # A new stream of another app_id, from the earliest change, into the same bronze: refused
    # before its checkpoint or anything else is written; told where to start, it goes on.
    before = (local_files(lake), keys())
    with pytest.raises(ConfigError, match=r"holds micro-batches of another stream \(app_id 'orders-v1'\)"):
        start("orders-v2")
    assert (local_files(lake), keys()) == before
    # (Without metrics, which pyarrow.fs cannot keep under an s3a:// checkpoint, the facts rows
    # carry no end offset; the last change read is where the new stream starts after.)
    read_up_to = max(r["max_lsn"] for r in spark.read.format("delta").load(f"{lake}/facts").collect()
                     if r["max_lsn"] is not None)
    start("orders-v2", startingLsn=read_up_to)
    counted = spark.read.format("delta").load(f"{lake}/bronze").groupBy("_start_lsn", "_seqval", "_operation").count()
    assert counted.count() > 0 and counted.where("count > 1").count() == 0
