"""Chunked snapshots on Spark: ``to_delta(bootstrap=True, snapshot="chunked")`` opens one at S and
starts the stream there; ``backfill()`` reads it in waves next to the running stream, called
again and again until done, under a writer. The chunks tile the key space (plans table beside
bronze), every change after S is in bronze once, the latest images equal the table. Through the
odbc backend from `sim serve` into tables named in the metastore too; and every refusal."""

import json

import pytest

from plan_rows import planned_chunks
from spark_helpers import change_table, delta, make_shop, served_sim, sim_options, wait_for, workload
from test_seed_dataframe import latest_images
from test_snapshot_source import current_rows

CI = "dbo_customers"
KEY = ("customer_id",)


@pytest.fixture
def shop(cli, tmp_path):
    return make_shop(cli, tmp_path, transactions=300)


def backfill_until_done(cdc, target, app_id, facts, **budget):
    states = []
    for _ in range(200):
        status = cdc.backfill(target, app_id=app_id, facts_table=facts, **budget)
        states.append(status["state"])
        if status["state"] == "done":
            return status, states
    raise AssertionError(f"backfill never done: {states[-5:]}")


def check_snapshot(rows_of_bronze, facts_rows, plans_rows, app_id, shop):
    opened = [r for r in facts_rows if r["event"] == "snapshot_open" and r["app_id"] == app_id]
    assert len(opened) == 1 and json.loads(opened[0]["detail"])["mode"] == "chunked"
    s = opened[0]["max_lsn"]
    plan = planned_chunks(plans_rows, s)
    assert len(plan) >= 3 and plan[0][1] is None
    assert all(plan[i][1] == plan[i - 1][2] for i in range(1, len(plan)))  # they tile
    chunk_rows = {json.loads(r["detail"])["chunk"]: r["rows"] for r in facts_rows
                  if r["event"] == "snapshot_chunk" and r["app_id"] == app_id}
    assert sorted(chunk_rows) == [chunk for chunk, _, _ in plan]
    # Each chunk read is in the plans table too, as 0.8.0 records it, after the plan.
    read = sorted(json.loads(r["detail"])["chunk"] for r in plans_rows
                  if r["snapshot"] == s and r["event"] == "snapshot_chunk")
    assert read == sorted(chunk_rows)
    snapshot = [r for r in rows_of_bronze if r["_operation"] == 0]
    assert all(r["_snapshot"] == s and r["_start_lsn"] >= s for r in snapshot)
    assert sum(chunk_rows.values()) == len(snapshot)
    done = [r for r in facts_rows if r["event"] == "bootstrap" and r["app_id"] == app_id]
    assert len(done) == 1 and done[0]["max_lsn"] == s and done[0]["rows"] == len(snapshot)
    # Every change after S once; the latest images are the table's.
    after = sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in change_table(shop, CI).to_pylist()
                   if r["_start_lsn"] > s)
    assert sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in rows_of_bronze
                  if r["_operation"] != 0) == after
    table = current_rows(shop, CI, KEY)
    latest = latest_images(rows_of_bronze)
    assert set(latest) == set(table)
    for key, row in latest.items():
        assert (row["name"], row["email"]) == (table[key]["name"], table[key]["email"])
    return s


def test_backfill_next_to_a_running_stream_under_a_writer(spark, shop, cli, tmp_path):
    """Silver is kept after every wave too: the waves as they come, its verdict held until the
    snapshot is complete, then rebuilt from it equal to the table."""
    from mssql_cdc import _core, apply_changes, finalization, stream

    target, facts, app_id = f"{tmp_path}/bronze", f"{tmp_path}/facts", "customers-chunked"
    control, silver = f"{tmp_path}/control", f"{tmp_path}/silver"
    options = dict(sim_options(shop), captureInstance=CI, numPartitions="2")
    cdc = stream(spark, options)

    def keep_silver(query):
        finalization.advance(spark, control, target, finalization.end_offset_from_progress(query.lastProgress))
        return apply_changes(spark, target, silver, control_table=control, facts_table=facts, options=options)

    query = cdc.to_delta(target, app_id, f"{tmp_path}/ckpt", facts, bootstrap=True, snapshot="chunked",
                         trigger={"processingTime": "1 second"})
    try:
        wait_for(lambda: query.lastProgress is not None, what="the stream's first batch")
        status = cdc.backfill(target, app_id=app_id, facts_table=facts, chunk_rows=15, max_waves=1,
                              target_wave_seconds=0)
        assert status["state"] == "running" and status["chunks_done"] == 2 and status["chunks_total"] >= 4, status
        calls = 1
        waves_in_silver = []
        while status["state"] != "done":
            applied = keep_silver(query)
            assert applied["finalized_until"] is None  # held while the snapshot is open
            position = [r for r in delta(control).to_pylist() if r["table_name"] == silver][0]
            assert position["open_snapshot_lsn"] is not None
            waves_in_silver.append(position["snapshot_wave"])
            # The writer: inserts, updates and deletes between the waves, read by the stream too.
            workload(cli, shop, 15, seed=20 + calls, tables=["dbo.customers"])
            status = cdc.backfill(target, app_id=app_id, facts_table=facts, max_waves=1, target_wave_seconds=0)
            calls += 1
            assert calls < 20, status
        assert waves_in_silver == sorted(waves_in_silver) and waves_in_silver[-1] > waves_in_silver[0]
        assert status["done"] and status["chunks_done"] == status["chunks_total"]
        assert cdc.backfill(target, app_id=app_id, facts_table=facts)["state"] == "done"
    finally:
        query.stop()
    last = cdc.to_delta(target, app_id, f"{tmp_path}/ckpt", facts, bootstrap=True, snapshot="chunked",
                        trigger={"availableNow": True})
    last.awaitTermination()
    done = keep_silver(last)
    assert done["rebuilt"] and done["finalized_until"] is not None
    table = current_rows(shop, CI, KEY)
    silver_rows = {(r["customer_id"],): r for r in delta(silver).to_pylist()}
    assert set(silver_rows) == set(table)
    for key, row in silver_rows.items():
        assert (row["name"], row["email"]) == (table[key]["name"], table[key]["email"])
    facts_rows = delta(facts).to_pylist()
    s = check_snapshot(delta(target).to_pylist(), facts_rows, delta(_core.plans_table_for(target)).to_pylist(),
                       app_id, shop)
    stamps = {r["min_lsn"] for r in facts_rows if r["event"] == "snapshot_chunk"}
    assert len(stamps) > 1 and min(stamps) >= s  # stamped before each wave, never below S
    # Reconcile: every bucket matches and the chunks pass their checks.
    from mssql_cdc import reconcile
    found = reconcile(spark, options, silver, bronze=target, control_table=control, facts_table=facts,
                      bucket_rows=25, sample=1.0, seed=5)
    assert found["buckets"] > 1 and found["match"] == found["buckets"] and found["failures"] == {}, found


@pytest.mark.connect
def test_backfill_through_odbc_into_tables_named_in_the_metastore(spark, shop, cli, tmp_path):
    from mssql_cdc import stream

    spark.sql("CREATE SCHEMA IF NOT EXISTS chunked")
    for name in ("bronze", "bronze_snapshot_plans", "facts"):
        spark.sql(f"DROP TABLE IF EXISTS chunked.{name}")
    app_id = "customers-odbc"
    with served_sim(cli, shop, user="chunked_reader") as odbc:
        cdc = stream(spark, dict(odbc, captureInstance=CI, numPartitions="2"))
        cdc.to_delta("chunked.bronze", app_id, f"{tmp_path}/ckpt", "chunked.facts", bootstrap=True,
                     snapshot="chunked", trigger={"availableNow": True}).awaitTermination()
        workload(cli, shop, 30, seed=8, tables=["dbo.customers"])  # changes between the waves
        status, states = backfill_until_done(cdc, "chunked.bronze", app_id, "chunked.facts", chunk_rows=40,
                                             max_waves=1)
        assert states[0] == "running" and status["done"]
        cdc.to_delta("chunked.bronze", app_id, f"{tmp_path}/ckpt", "chunked.facts", bootstrap=True,
                     snapshot="chunked", trigger={"availableNow": True}).awaitTermination()
    rows = [r.asDict() for r in spark.table("chunked.bronze").collect()]
    facts_rows = [r.asDict() for r in spark.table("chunked.facts").collect()]
    plans = [r.asDict() for r in spark.table("chunked.bronze_snapshot_plans").collect()]
    check_snapshot(rows, facts_rows, plans, app_id, shop)


def test_backfill_refusals_and_the_mode_lock(spark, shop, tmp_path):
    from mssql_cdc import ConfigError, _core, stream

    target, facts, app_id = f"{tmp_path}/bronze", f"{tmp_path}/facts", "customers-v1"
    cdc = stream(spark, dict(sim_options(shop), captureInstance=CI))
    for budget, message in ((dict(chunk_rows=0), "chunk_rows must be"), (dict(chunk_rows=True), "whole number"),
                            (dict(chunk_rows=1.5), "whole number"), (dict(max_waves=0), "max_waves must be"),
                            (dict(max_seconds=-1), "max_seconds must be"),
                            (dict(isolation="bogus"), "isolation must be")):
        with pytest.raises(ConfigError, match=message):
            cdc.backfill(target, app_id=app_id, facts_table=facts, **budget)
    # Nothing opened: a status, and nothing written.
    status = cdc.backfill(target, app_id=app_id, facts_table=facts)
    assert status["state"] == "no_snapshot" and status["paused"] and "to_delta" in status["reason"]
    assert not (tmp_path / "bronze").exists() and not (tmp_path / "facts").exists()
    with pytest.raises(ConfigError, match="needs facts_table"):
        cdc.to_delta(target, app_id, f"{tmp_path}/ckpt", bootstrap=True, snapshot="chunked")
    assert not (tmp_path / "bronze").exists()

    cdc.to_delta(target, app_id, f"{tmp_path}/ckpt", facts, bootstrap=True, snapshot="chunked",
                 trigger={"availableNow": True}).awaitTermination()
    # The other mode while it is open: refused, nothing written.
    before = len(delta(facts).to_pylist())
    with pytest.raises(ConfigError, match="open chunked snapshot"):
        cdc.to_delta(target, app_id, f"{tmp_path}/ckpt2", facts, bootstrap=True, snapshot="full")
    with pytest.raises(ConfigError, match="open chunked snapshot"):
        cdc.snapshot(target, app_id=app_id, facts_table=facts)
    assert len(delta(facts).to_pylist()) == before

    first = cdc.backfill(target, app_id=app_id, facts_table=facts, chunk_rows=30, max_waves=1)
    assert first["state"] == "running"
    # A plan edited by hand is found out before any wave reads by it.
    plans = _core.plans_table_for(target)
    planned = spark.sql(f"DESCRIBE HISTORY delta.`{plans}`").agg({"version": "max"}).first()[0]
    plan = json.loads(next(r["detail"] for r in delta(plans).to_pylist() if r["event"] == "snapshot_plan"))
    plan["chunks"][2][1] = 99999
    edited = json.dumps(plan).replace("'", "''")
    spark.sql(f"UPDATE delta.`{plans}` SET detail = '{edited}' WHERE event = 'snapshot_plan'")
    with pytest.raises(ConfigError, match="edited by hand"):
        cdc.backfill(target, app_id=app_id, facts_table=facts)
    spark.sql(f"RESTORE TABLE delta.`{plans}` TO VERSION AS OF {planned}")
    assert backfill_until_done(cdc, target, app_id, facts)[0]["done"]
    # Complete: the lock is gone.
    assert cdc.snapshot(target, app_id=app_id, facts_table=facts)["lsn"]
