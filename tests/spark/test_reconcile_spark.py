"""reconcile on Spark: a silver table apply_changes keeps matches its source table bucket by
bucket; changes not yet streamed are IN_FLIGHT; a changed, a missing and an extra silver row are
each found (RECORD_DIFF, MISSING_TARGET, MISSING_SOURCE) and appended to the report table; the
native `mssql-cdc reconcile` of the same tables finds the same; bad input is refused before
anything is written."""

import json

import pytest
from spark_helpers import sim_options, workload
from test_silver_spark import stream_once


@pytest.mark.connect
def test_reconcile_matches_then_names_every_difference(spark, shop, cli, tmp_path):
    from mssql_cdc import apply_changes, reconcile

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    bronze, facts, control, silver, report = (f"{tmp_path}/bronze_dbo_orders", f"{tmp_path}/facts",
                                              f"{tmp_path}/control", f"{tmp_path}/silver_dbo_orders",
                                              f"{tmp_path}/report")
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control, bootstrap=True)
    apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)
    run = dict(bronze=bronze, control_table=control, facts_table=facts, bucket_rows=15, seed=3)

    first = reconcile(spark, options, silver, sample=1.0, report_table=report, **run)
    assert first["buckets"] > 1 and first["match"] == first["buckets"] == first["hashed"], first
    assert first["failures"] == {} and first["silver_lsn"] and first["source_lsn"]
    rows = first["report"].collect()
    assert len(rows) == first["buckets"] and all(r["status"] == "MATCH" for r in rows)
    assert spark.read.format("delta").load(report).count() == len(rows)
    # The report table is the engine's: its columns, their comments and its comment.
    from mssql_cdc.reconcile import REPORT_COLUMNS, REPORT_COMMENT

    fields = spark.read.format("delta").load(report).schema.fields
    assert [(f.name, f.metadata.get("comment")) for f in fields] == [(n, c) for n, _, c in REPORT_COLUMNS]
    assert spark.sql(f"DESCRIBE DETAIL delta.`{report}`").collect()[0]["description"] == REPORT_COMMENT

    workload(cli, shop, 40, 12, tables=["dbo.orders"])
    flying = reconcile(spark, options, silver, sample=0.0, **run)
    assert flying["in_flight"] > 0 and flying["mismatch"] == 0 and flying["failures"] == {}, flying
    # The keys in flight are named and left out; the buckets' other keys were still compared.
    assert flying["keys_in_flight"] and all(set(k) == {"order_id"} for k in flying["keys_in_flight"]), flying
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control)
    apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)

    ids = sorted(r[0] for r in spark.read.format("delta").load(silver).select("order_id").collect())
    spark.sql(f"UPDATE delta.`{silver}` SET status = 'tampered' WHERE order_id = {ids[2]}")
    spark.sql(f"DELETE FROM delta.`{silver}` WHERE order_id = {ids[-3]}")
    spark.sql(f"INSERT INTO delta.`{silver}` SELECT {ids[-1] + 500} AS order_id, * EXCEPT (order_id) "
              f"FROM delta.`{silver}` WHERE order_id = {ids[5]}")
    found = reconcile(spark, options, silver, sample=1.0, report_table=report, **run)
    assert found["failures"] == {"RECORD_DIFF": 1, "MISSING_TARGET": 1, "MISSING_SOURCE": 1}, found
    keyed = {(r["failure_type"], json.loads(r["key"])["order_id"]) for r in found["report"].collect() if r["key"]}
    assert keyed == {("RECORD_DIFF", ids[2]), ("MISSING_TARGET", ids[-3]), ("MISSING_SOURCE", ids[-1] + 500)}
    assert spark.read.format("delta").load(report).where("run_id = '%s'" % found["run_id"]).count() == \
        found["report"].count()
    # Keyed by two columns there is no grid: the whole table is one bucket, whose counts cancel
    # out here (a row gone, one added); its sampled ranges look silver's rows up by key.
    composite = reconcile(spark, options, silver, keys=["order_id", "customer_id"], sample=1.0, **run)
    assert composite["buckets"] == 1 and composite["hashed"] == 1, composite
    keyed = {(r["failure_type"], json.loads(r["key"])["order_id"]) for r in composite["report"].collect() if r["key"]}
    assert keyed == {("RECORD_DIFF", ids[2]), ("MISSING_TARGET", ids[-3])}, composite

    # The native engine's reconcile of the same tables finds the same three keys.
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(f"""tables = ["dbo_orders"]
[source]
backend = "sim"
simPath = "{shop}"
[stream]
target = "{tmp_path}/bronze_{{ci}}"
app_id = "{{ci}}-native"
checkpoint = "{tmp_path}/native/{{ci}}"
facts_table = "{facts}"
control_table = "{control}"
[silver]
target = "{tmp_path}/silver_{{ci}}"
""")
    out = cli("reconcile", pipeline, "--bucket-rows", 15, "--sample", 1, "--seed", 3, check=False)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "MISSING_SOURCE 1; MISSING_TARGET 1; RECORD_DIFF 1" in out.stdout, out.stdout


def test_bad_reconcile_input_is_refused_before_anything_is_written(spark, shop, tmp_path):
    from mssql_cdc import reconcile
    from mssql_cdc.errors import ConfigError

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    run = dict(bronze=f"{tmp_path}/bronze", control_table=f"{tmp_path}/control", report_table=f"{tmp_path}/r")
    for bad, says in [(dict(bucket_rows=0), "bucket_rows must be at least 1"),
                      (dict(sample=1.5), "sample must be a fraction in [0, 1]"),
                      (dict(sample=-0.1), "sample must be a fraction in [0, 1]"),
                      (dict(bucket_rows=True), "bucket_rows must be an int"),
                      ({}, "does not exist yet: run apply_changes first")]:
        with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("]", r"\]")):
            reconcile(spark, options, f"{tmp_path}/silver", **run, **bad)
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("shop.sim")] == []


def test_a_date_key_is_reconciled_in_buckets_of_day_numbers(spark, cli, tmp_path):
    import datetime

    from mssql_cdc import apply_changes, reconcile

    db = tmp_path / "daily.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "create-table", "--db", db, "--table", "dbo.daily", "--column", "day date not null",
        "--column", "amount int", "--key", "day")
    first_day = datetime.date(1965, 6, 1)
    days = [first_day + datetime.timedelta(days=333 * i) for i in range(40)]
    inserts = [{"op": "insert", "table": "dbo.daily", "row": {"day": str(d), "amount": n}} for n, d in enumerate(days)]
    cli("sim", "dml", "--db", db, "--json", json.dumps(inserts))
    options = dict(sim_options(db), captureInstance="dbo_daily")
    bronze, facts, control, silver = (f"{tmp_path}/bronze", f"{tmp_path}/facts", f"{tmp_path}/control",
                                      f"{tmp_path}/silver")
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control, bootstrap=True)
    apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)
    run = dict(bronze=bronze, control_table=control, facts_table=facts, bucket_rows=10, seed=5)

    matched = reconcile(spark, options, silver, sample=0.0, **run)
    assert matched["buckets"] >= 4 and matched["match"] == matched["buckets"], matched
    buckets = matched["report"].collect()
    epoch_days = sum((d - datetime.date(1970, 1, 1)).days for d in days)
    assert sum(int(r["silver_key_sum"]) for r in buckets) == sum(int(r["source_key_sum"]) for r in buckets) == epoch_days

    # A silver date moved by one day: the count of its bucket holds, the sum does not.
    spark.sql(f"UPDATE delta.`{silver}` SET day = date_add(day, 1) WHERE day = DATE'{days[15]}'")
    moved = reconcile(spark, options, silver, sample=0.0, **run)
    assert moved["mismatch"] == 1 and moved["failures"] == {"MISSING_SOURCE": 1, "MISSING_TARGET": 1}, moved
