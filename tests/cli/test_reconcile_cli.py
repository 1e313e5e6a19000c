"""`mssql-cdc reconcile`: each silver table of a pipeline compared with its source table, bucket
by bucket and then row by row. A silver table kept by `run` matches; changes the stream has not
applied yet are IN_FLIGHT; a changed, a missing and an extra silver row are each found and named
in the report table."""

import datetime
import json
import os
import subprocess

import pytest

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from helpers import BINARY, TABLES, SimServer, pipeline_text
from test_chunked_backfill import odbc_source
from test_silver_cli import make_db, write_pipeline


def reconcile(tmp_path, pipeline, *args):
    return subprocess.run([BINARY, "reconcile", str(pipeline), *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)


def summary(out, ci):
    line = next(l for l in out.splitlines() if l.split(":")[0].endswith(ci))
    return line


def test_reconcile_matches_then_finds_what_differs(cli, tmp_path):
    make_db(cli, tmp_path, 150, 3)
    pipeline = write_pipeline(tmp_path)
    cli("run", pipeline)
    report = tmp_path / "lake" / "ops" / "reconcile"

    done = reconcile(tmp_path, pipeline, "--bucket-rows", 20, "--sample", 1, "--seed", 7,
                     "--report-table", report)
    assert done.returncode == 0, done.stdout + done.stderr
    for ci in TABLES:
        assert " 0 in flight, 0 mismatch" in summary(done.stdout, ci), done.stdout
    rows = DeltaTable(str(report)).to_pyarrow_table().to_pylist()
    buckets = [r for r in rows if r["status"] is not None]
    assert buckets and all(r["status"] == "MATCH" and r["hashed"] for r in buckets)
    orders = [r for r in buckets if r["silver"].endswith("dbo_orders")]
    assert len(orders) > 1, "integer keys are cut into buckets of about --bucket-rows"
    assert sum(r["source_rows"] for r in orders) == sum(r["silver_rows"] for r in orders)
    assert all(r["source_key_sum"] == r["silver_key_sum"] for r in orders)
    assert not [r for r in rows if r["failure_type"] is not None]

    # Changes committed after silver's apply: the buckets they touch are in flight, not wrong.
    make_db(cli, tmp_path, 60, 4)
    done = reconcile(tmp_path, pipeline, "--bucket-rows", 20, "--sample", 0)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 mismatch" in summary(done.stdout, "dbo_orders") and "MISSING" not in done.stdout
    assert " 0 in flight" not in summary(done.stdout, "dbo_orders"), done.stdout
    cli("run", pipeline)

    # A changed row, a missing row and an extra row in silver. The changed row keeps its
    # bucket's count and key sum: only the row-by-row comparison of a sample finds it.
    silver = tmp_path / "lake" / "silver" / "dbo_orders"
    table = DeltaTable(str(silver))
    ids = sorted(table.to_pyarrow_table(columns=["order_id"])["order_id"].to_pylist())
    changed, missing = ids[3], ids[-5]
    table.update(updates={"status": "'tampered'"}, predicate=f"order_id = {changed}")
    DeltaTable(str(silver)).delete(f"order_id = {missing}")
    extra = DeltaTable(str(silver)).to_pyarrow_table().filter(pa.compute.field("order_id") == ids[10])
    extra = extra.set_column(extra.schema.get_field_index("order_id"), "order_id",
                             pa.array([ids[-1] + 1000], extra.schema.field("order_id").type))
    write_deltalake(str(silver), extra, mode="append")

    done = reconcile(tmp_path, pipeline, "--table", "dbo_orders", "--bucket-rows", 20, "--sample", 0)
    assert done.returncode == 1 and "RECORD_DIFF" not in done.stdout, done.stdout + done.stderr
    done = reconcile(tmp_path, pipeline, "--table", "dbo_orders", "--bucket-rows", 20, "--sample", 1,
                     "--report-table", report)
    assert done.returncode == 1, done.stdout + done.stderr
    line = summary(done.stdout, "dbo_orders")
    assert "MISSING_SOURCE 1; MISSING_TARGET 1; RECORD_DIFF 1" in line, line
    keys = {(r["failure_type"], json.loads(r["key"])["order_id"]): r
            for r in DeltaTable(str(report)).to_pyarrow_table().to_pylist() if r["key"] is not None}
    assert set(keys) == {("RECORD_DIFF", changed), ("MISSING_TARGET", missing), ("MISSING_SOURCE", ids[-1] + 1000)}
    assert json.loads(keys[("RECORD_DIFF", changed)]["detail"])["columns"] == ["status"]


def test_a_change_in_flight_does_not_hide_a_missing_row_in_its_bucket(cli, tmp_path):
    """One row deleted from silver and an unrelated key updated at the source but not streamed:
    with the default bucket size the whole table is one bucket, in flight; its other keys are
    still compared, so the missing row is found and the key in flight is named, not compared."""
    db = make_db(cli, tmp_path, 60, 8)
    pipeline = write_pipeline(tmp_path)
    cli("run", pipeline)
    silver = tmp_path / "lake" / "silver" / "dbo_orders"
    ids = sorted(DeltaTable(str(silver)).to_pyarrow_table(columns=["order_id"])["order_id"].to_pylist())
    missing, pending = ids[4], ids[9]
    DeltaTable(str(silver)).delete(f"order_id = {missing}")
    cli("sim", "dml", "--db", db, "--json", json.dumps(
        [{"op": "update", "table": "dbo.orders", "key": {"order_id": pending}, "set": {"status": "pending"}}]))

    done = reconcile(tmp_path, pipeline, "--table", "dbo_orders")
    assert done.returncode == 1, done.stdout + done.stderr
    line = summary(done.stdout, "dbo_orders")
    assert "1 buckets, 0 match, 0 in flight, 1 mismatch" in line, line
    assert "MISSING_TARGET 1" in line and "RECORD_DIFF" not in line, line
    assert f'1 key in flight left out ({{"order_id":{pending}}})' in line, line


def test_bad_reconcile_input_is_refused_before_anything_is_written(cli, tmp_path):
    make_db(cli, tmp_path, 20, 6)
    pipeline = write_pipeline(tmp_path)
    for args, says in [(["--bucket-rows", 0], "bucket_rows must be at least 1"),
                       (["--sample", 1.5], "sample must be a fraction in [0, 1]"),
                       (["--table", "dbo_nope"], "'dbo_nope' is not one of the pipeline's tables")]:
        done = reconcile(tmp_path, pipeline, *args)
        assert done.returncode == 2 and says in done.stderr, done.stdout + done.stderr
    done = reconcile(tmp_path, pipeline)
    assert done.returncode == 2 and "does not exist yet" in done.stderr, done.stderr
    assert not (tmp_path / "lake").exists()


@pytest.mark.parametrize("backend", ["sim", "odbc"])
def test_a_date_key_is_counted_and_summed_by_day_in_buckets(cli, tmp_path, backend):
    """Tier 1 of a one-column date key (spec 4.11): the source counts rows and sums day numbers
    per slice in one GROUP BY (through ODBC, the T-SQL sim serve answers), the lake the same over
    silver, in buckets of about --bucket-rows; a date replaced by another in one bucket changes
    its sum where its count stays."""
    db = tmp_path / "days.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "create-table", "--db", db, "--table", "dbo.daily", "--column", "day date not null",
        "--column", "amount int", "--key", "day")
    # Dates on both sides of 1970 (negative day numbers), a century apart.
    days = [datetime.date(1960, 1, 1) + datetime.timedelta(days=400 * i) for i in range(60)]
    cli("sim", "dml", "--db", db, "--json", json.dumps(
        [{"op": "insert", "table": "dbo.daily", "row": {"day": d.isoformat(), "amount": i}} for i, d in enumerate(days)]))
    server = SimServer(db) if backend == "odbc" else None
    try:
        source = odbc_source(cli, db, server) if server else 'sim_path = "days.sim"'
        text = pipeline_text("availableNow", source, tables='tables = ["dbo_daily"]', backend=backend,
                             stream_extra="bootstrap = true") + '\n[silver]\ntarget = "lake/silver/{ci}"\n'
        pipeline = tmp_path / "pipeline.toml"
        pipeline.write_text(text)
        cli("run", pipeline)
        report = tmp_path / "lake" / "ops" / "reconcile"
        done = reconcile(tmp_path, pipeline, "--bucket-rows", 10, "--sample", 1, "--seed", 3, "--report-table", report)
        assert done.returncode == 0 and " 0 mismatch" in summary(done.stdout, "dbo_daily"), done.stdout + done.stderr
        buckets = [r for r in DeltaTable(str(report)).to_pyarrow_table().to_pylist() if r["status"] is not None]
        assert len(buckets) > 3 and all(r["status"] == "MATCH" and r["hashed"] for r in buckets), buckets
        epoch = datetime.date(1970, 1, 1)
        assert sum(r["source_key_sum"] for r in buckets) == sum((d - epoch).days for d in days)
        assert all(r["source_key_sum"] == r["silver_key_sum"] for r in buckets)
        assert json.loads(buckets[1]["bucket_lo"]) == json.loads(buckets[0]["bucket_hi"])
        datetime.date.fromisoformat(json.loads(buckets[1]["bucket_lo"]))  # a date, not a day number

        # One silver date moved by a day: its bucket's count holds, its sum does not.
        silver = tmp_path / "lake" / "silver" / "dbo_daily"
        moved = days[25]
        DeltaTable(str(silver)).update(updates={"day": f"CAST('{moved + datetime.timedelta(days=1)}' AS DATE)"},
                                       predicate=f"day = '{moved}'")
        done = reconcile(tmp_path, pipeline, "--bucket-rows", 10, "--sample", 0)
        assert done.returncode == 1, done.stdout + done.stderr
        line = summary(done.stdout, "dbo_daily")
        assert " 1 mismatch" in line and "MISSING_SOURCE 1; MISSING_TARGET 1" in line, line
    finally:
        os.environ.pop("MSSQL_CDC_CHUNKED_PASSWORD", None)
        if server:
            server.stop()
