"""format("mssql_cdc_snapshot"): a capture instance's table as operation-0 rows, read by
Spark tasks in key ranges; snapshotChunks, snapshotKeys and snapshotLsn; refusals before any
row is read."""

import json
import os

import pytest

from spark_helpers import change_table, delta, make_shop, sim_options, workload
from test_stream import commit_infos


@pytest.fixture
def shop(cli, tmp_path):
    return make_shop(cli, tmp_path, transactions=300)


def current_rows(db, ci, key):
    """The table now: the latest image per key of every change since CDC was enabled (the shop
    captured every row from its first insert), deleted keys left out."""
    latest = {}
    for row in change_table(db, ci).to_pylist():
        if row["_operation"] == 3:
            continue
        k = tuple(row[c] for c in key)
        order = (row["_start_lsn"], row["_command_id"], row["_seqval"], row["_operation"])
        if k not in latest or order > latest[k][0]:
            latest[k] = (order, row)
    return {k: row for k, (_, row) in latest.items() if row["_operation"] != 1}


def snapshot(spark, shop, ci, **options):
    return (spark.read.format("mssql_cdc_snapshot").options(**sim_options(shop))
            .option("captureInstance", ci).options(**options).load())


def test_the_snapshot_source_reads_the_table_as_operation_zero_rows(spark, shop):
    from mssql_cdc import _core, register

    register(spark)
    expected = current_rows(shop, "dbo_order_items", ("order_id", "line_no"))
    frame = snapshot(spark, shop, "dbo_order_items", numPartitions="3")
    assert frame.schema.fieldNames() == change_table(shop, "dbo_order_items").schema.names
    rows = [row.asDict() for row in frame.collect()]
    assert {(r["order_id"], r["line_no"]) for r in rows} == set(expected)
    assert len(rows) == len(expected)
    top = _core.open_sim_source(str(shop)).max_lsn()
    assert {r["_start_lsn"] for r in rows} == {top}  # stamped before the read
    assert {r["_operation"] for r in rows} == {0}
    for r in rows:
        want = expected[(r["order_id"], r["line_no"])]
        assert (r["product_code"], r["quantity"], r["description"]) == \
            (want["product_code"], want["quantity"], want["description"])


@pytest.mark.connect
def test_chunks_are_read_by_a_task_each_and_say_which_chunk_read_a_row(spark, shop):
    from mssql_cdc import register

    register(spark)
    keys = sorted(current_rows(shop, "dbo_orders", ("order_id",)))
    middle = keys[len(keys) // 2][0]
    chunks = [[0, None, middle], [7, middle, None]]
    stamp = "0x00000000000000000001"
    frame = snapshot(spark, shop, "dbo_orders", snapshotChunks=json.dumps(chunks), snapshotLsn=stamp)
    assert frame.schema.fieldNames()[-1] == "_chunk"
    rows = frame.select("order_id", "_chunk", "_start_lsn").collect()
    assert sorted(r.order_id for r in rows) == [k[0] for k in keys]
    assert {r.order_id for r in rows if r._chunk == 0} == {k[0] for k in keys if k[0] < middle}
    assert {r.order_id for r in rows if r._chunk == 7} == {k[0] for k in keys if k[0] >= middle}
    assert {r._start_lsn for r in rows} == {stamp}
    # snapshotKeys: bounds over another column (each chunk then scans the table).
    by_customer = snapshot(spark, shop, "dbo_orders", snapshotKeys='["customer_id"]',
                           snapshotChunks=json.dumps([[0, None, 10], [1, 10, None]]))
    counted = {r._chunk: r["count"] for r in by_customer.groupBy("_chunk").count().collect()}
    assert sum(counted.values()) == len(keys)


def test_bad_snapshot_options_are_refused_before_reading(spark, shop):
    from mssql_cdc import register

    register(spark)
    with pytest.raises(Exception, match="snapshotChunks"):
        snapshot(spark, shop, "dbo_orders", snapshotChunks="[[0, 1]]").collect()
    with pytest.raises(Exception, match="does not fit a key of 2 columns"):
        snapshot(spark, shop, "dbo_order_items", snapshotChunks="[[0, null, 5]]").collect()
    with pytest.raises(Exception, match="snapshotLsn"):
        snapshot(spark, shop, "dbo_orders", snapshotLsn="xyz").collect()


def test_snapshot_appends_one_commit_finds_it_again_and_retakes_it_when_asked(spark, shop, cli, tmp_path):
    from mssql_cdc import ConfigError, _core, stream

    target = f"{tmp_path}/bronze"
    options = dict(sim_options(shop), captureInstance="dbo_customers")
    cdc = stream(spark, options)
    with pytest.raises(ConfigError, match="facts_table is given without app_id"):
        cdc.snapshot(target, facts_table=f"{tmp_path}/facts")
    assert not os.path.exists(target)  # refused before anything was written

    first = cdc.snapshot(target)
    top = _core.open_sim_source(str(shop)).max_lsn()
    assert first["lsn"] == top and first["commit_ts"]
    rows = delta(target).to_pylist()
    assert {r["customer_id"] for r in rows} == {k[0] for k in current_rows(shop, "dbo_customers", ("customer_id",))}
    assert {(r["_operation"], r["_snapshot"], r["_start_lsn"], r["_batch_id"], r["_chunk"]) for r in rows} == \
        {(0, top, top, None, None)}
    metadata = [json.loads(c["userMetadata"]) for c in commit_infos(target).values() if c.get("userMetadata")]
    assert metadata == [{"snapshot": "dbo_customers", "lsn": top, "commit_ts": first["commit_ts"]}]

    # Found again: the same offset, nothing read or written.
    workload(cli, shop, 20, seed=3, tables=["dbo.customers"])
    assert cdc.snapshot(target) == first
    assert len(delta(target).to_pylist()) == len(rows)
    # resnapshot=True takes a new one at the new max LSN.
    second = cdc.snapshot(target, resnapshot=True)
    assert second["lsn"] > first["lsn"]
    again = delta(target).to_pylist()
    newest = {r["customer_id"] for r in again if r["_snapshot"] == second["lsn"]}
    assert newest == {k[0] for k in current_rows(shop, "dbo_customers", ("customer_id",))}
    # A stream bootstrapped into it starts from the newest snapshot and reads nothing.
    query = cdc.to_delta(target, "customers-v1", f"{tmp_path}/ckpt", f"{tmp_path}/facts", bootstrap=True,
                         trigger={"availableNow": True})
    query.awaitTermination()
    assert len(delta(target).to_pylist()) == len(again)
    bootstrap = [r for r in delta(f"{tmp_path}/facts").to_pylist() if r["event"] == "bootstrap"]
    assert [r["max_lsn"] for r in bootstrap] == [second["lsn"]]
