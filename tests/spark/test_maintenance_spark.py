"""Tables `mssql-cdc optimize` compacted and `mssql-cdc vacuum` cleaned, read by Spark: every
table of a native pipeline (bronze, plans, silver, facts, control) reads the same rows through
Spark's Delta reader as through delta-rs, the compaction shows in Spark's history as OPTIMIZE
without a data change, and a Spark stream reading bronze does not take the compacted rows as
new ones."""

import time

from deltalake import DeltaTable
from spark_helpers import workload


def rows_of(frame_rows):
    return sorted(repr(sorted(r.items())) for r in frame_rows)


def test_compacted_and_vacuumed_tables_read_the_same_in_spark(spark, shop, cli, tmp_path):
    lake = tmp_path / "lake"
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(f"""tables = ["dbo_orders", "dbo_customers"]
[source]
backend = "sim"
simPath = "{shop}"
sourceTimeZone = "UTC"
[stream]
target = "{lake}/bronze/{{ci}}"
app_id = "{{ci}}-native"
checkpoint = "{tmp_path}/ckpt/{{ci}}"
facts_table = "{lake}/facts"
control_table = "{lake}/control"
trigger = "availableNow"
bootstrap = true
[silver]
target = "{lake}/silver/{{ci}}"
""")
    cli("run", pipeline)
    for seed in (21, 22, 23):  # a few batches, so that each table has small files to compact
        workload(cli, shop, 30, seed)
        cli("run", pipeline)
    bronze, copy = f"{lake}/bronze/dbo_orders", f"{tmp_path}/copy"

    def stream_bronze():
        """A Spark stream from bronze into a copy, continuing from its checkpoint."""
        (spark.readStream.format("delta").load(bronze).writeStream.format("delta")
         .option("checkpointLocation", f"{tmp_path}/copy_ckpt").trigger(availableNow=True).start(copy)
         .awaitTermination())
        return spark.read.format("delta").load(copy).count()

    streamed = stream_bronze()

    out = cli("optimize", pipeline, "--target-file-mb", "1").stdout
    assert "files compacted" in out, out
    time.sleep(1.5)
    cli("vacuum", pipeline, "--retention-hours", "0.0003")  # about a second

    tables = [f"{lake}/{name}" for name in ("bronze/dbo_orders", "bronze/dbo_customers", "silver/dbo_orders",
                                           "silver/dbo_customers", "facts", "control")]
    for table in tables:
        ours = DeltaTable(table).to_pyarrow_table().to_pylist()
        theirs = [r.asDict() for r in spark.read.format("delta").load(table).collect()]
        assert len(ours) == len(theirs) and ours, table
        assert rows_of(ours) == rows_of(theirs), table
    history = spark.sql(f"DESCRIBE HISTORY delta.`{bronze}`").collect()
    optimize = [h for h in history if h["operation"] == "OPTIMIZE"]
    assert optimize and optimize[0]["isBlindAppend"] is False

    # The stream again, from its checkpoint: the compaction (files removed and added) is no
    # change to it, neither new rows nor an update it refuses.
    assert stream_bronze() == streamed == DeltaTable(bronze).to_pyarrow_dataset().count_rows()
