"""Tables named in a catalog (a Hive metastore in embedded Derby): created through Spark column for
column as the engine creates them at a path, written exactly once, the verdict moved forward only
by concurrent writers, found by name from a new process, and every bad name refused before
anything is written."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from datetime import datetime
from pathlib import Path

import pytest
from spark_helpers import (ROOT, assert_bronze_equals_change_table, delta, guide_checkpoints_held, sim_options,
                           table_location)

from mssql_cdc import _core


@pytest.fixture
def lake(spark, tmp_path):
    """An empty schema `lake` (dropped with its tables afterwards)."""
    spark.sql("DROP SCHEMA IF EXISTS lake CASCADE")
    spark.sql("CREATE SCHEMA lake")
    yield "lake"
    spark.sql("DROP SCHEMA IF EXISTS lake CASCADE")


def described(spark, table):
    """(columns as (name, type, comment), table comment, mssql_cdc properties) as Spark describes them."""
    frame = spark.table(table) if "/" not in table else spark.read.format("delta").load(table)
    columns = [(f.name, f.dataType.simpleString(), f.metadata.get("comment")) for f in frame.schema.fields]
    name = table if "/" not in table else f"delta.`{table}`"
    detail = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]
    properties = {k: v for k, v in (detail["properties"] or {}).items() if k.startswith("mssql_cdc.")}
    return columns, detail["description"], properties


@pytest.mark.connect
def test_named_tables_are_the_tables_the_engine_writes_at_a_path(spark, shop, lake, tmp_path):
    from mssql_cdc import stream

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    query = stream(spark, options).to_delta("lake.bronze_orders", "orders-v1", f"{tmp_path}/ckpt",
                                            "lake.facts", trigger={"availableNow": True})
    query.awaitTermination()
    path_query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-path", f"{tmp_path}/ckpt-path",
                                                 f"{tmp_path}/facts", trigger={"availableNow": True})
    path_query.awaitTermination()
    assert described(spark, "lake.bronze_orders") == described(spark, f"{tmp_path}/bronze")
    assert described(spark, "lake.facts") == described(spark, f"{tmp_path}/facts")
    from mssql_cdc import finalization

    finalization.ensure_control_table(spark, "lake.control")
    finalization.ensure_control_table(spark, f"{tmp_path}/control")
    assert described(spark, "lake.control") == described(spark, f"{tmp_path}/control")
    # The named table lives where the catalog put it (the warehouse), and holds every change once.
    location = table_location(spark, "lake.bronze_orders")
    assert "lake.db" in location
    assert_bronze_equals_change_table(shop, "dbo_orders", location)
    assert spark.table("lake.bronze_orders").count() == delta(f"{tmp_path}/bronze").num_rows


@pytest.mark.connect
def test_a_named_table_is_written_exactly_once_under_replay(spark, shop, lake, tmp_path):
    from mssql_cdc import handoff, stream
    from mssql_cdc.metrics_dir import MetricsDir
    from mssql_cdc.sink import delta_sink

    options = dict(sim_options(shop), captureInstance="dbo_orders", maxCommitsPerBatch="80")
    query = stream(spark, options).to_delta("lake.bronze", "orders-v1", f"{tmp_path}/ckpt", "lake.facts",
                                            trigger={"availableNow": True})
    query.awaitTermination()
    bronze, facts = table_location(spark, "lake.bronze"), table_location(spark, "lake.facts")
    assert_bronze_equals_change_table(shop, "dbo_orders", bronze)
    version, facts_version = _core.delta_snapshot(bronze)["version"], _core.delta_snapshot(facts)["version"]
    last = query.lastProgress["batchId"]
    source = query.lastProgress["sources"][0]
    metrics = f"{tmp_path}/by-hand"
    planner = MetricsDir(metrics)
    handoff.write(planner, _core.offset_normalize(source["startOffset"]),
                  _core.offset_normalize(source["endOffset"]), None)
    again = spark.table("lake.bronze").where(f"_batch_id = {last}").drop("_batch_id", "_snapshot", "_chunk")
    assert again.count() > 0
    delta_sink("lake.bronze", "orders-v1", "lake.facts", metrics_path=metrics)(again, last)
    assert _core.delta_snapshot(bronze)["version"] == version
    assert _core.delta_snapshot(facts)["version"] == facts_version
    handoff.write(planner, _core.offset_normalize(source["endOffset"]),
                  _core.offset_normalize(source["endOffset"]), None)
    delta_sink("lake.bronze", "orders-v1", "lake.facts", metrics_path=metrics)(again, last + 1)
    assert _core.delta_snapshot(bronze)["version"] == version + 1
    rows = [r for r in delta(facts).to_pylist() if r["batch_id"] == last + 1]
    assert len(rows) == 1 and rows[0]["target"] == "lake.bronze"


def test_bootstrap_into_a_named_table_snapshots_once(spark, shop, cli, lake, tmp_path):
    from spark_helpers import info, workload

    from mssql_cdc import stream

    options = dict(sim_options(shop), captureInstance="dbo_customers")
    rows_now = next(t["rows"] for t in info(cli, shop)["tables"] if t["name"] == "dbo.customers")
    for run in range(2):
        query = stream(spark, options).to_delta("lake.customers", "customers-v1", f"{tmp_path}/ckpt",
                                                "lake.facts", bootstrap=True, trigger={"availableNow": True})
        query.awaitTermination()
        assert query.exception() is None
        snapshot = spark.table("lake.customers").where("_operation = 0")
        assert snapshot.count() == rows_now  # taken once, on the first run
        workload(cli, shop, 20, seed=30 + run, tables=["dbo.customers"])
    events = [r["event"] for r in spark.table("lake.facts").where("event IS NOT NULL").collect()]
    assert sorted(events) == ["bootstrap", "snapshot_open"]
    bootstrap_row = spark.table("lake.facts").where("event = 'bootstrap'").collect()[0]
    assert bootstrap_row["rows"] == rows_now and bootstrap_row["target"] == "lake.customers"
    # Every change after the snapshot's LSN follows it in bronze, once.
    lsn = snapshot.first()["_start_lsn"]
    streamed = spark.table("lake.customers").where("_operation != 0").count()
    from spark_helpers import change_table

    after = [r for r in change_table(shop, "dbo_customers").to_pylist() if r["_start_lsn"] > lsn]
    query = stream(spark, options).to_delta("lake.customers", "customers-v1", f"{tmp_path}/ckpt",
                                            "lake.facts", bootstrap=True, trigger={"availableNow": True})
    query.awaitTermination()
    streamed = spark.table("lake.customers").where("_operation != 0").count()
    assert streamed == len(after)


@pytest.mark.connect
def test_concurrent_writers_move_a_named_verdict_forward_only(spark, lake):
    from mssql_cdc import finalization

    control = "lake.table_finalization"
    finalization.ensure_control_table(spark, control)
    hours = list(range(1, 5))
    errors = []

    def advance(hour, name):
        try:
            end = {"lsn": f"0x{hour:020X}", "commit_ts": f"2026-01-01T{hour:02d}:30:00.000"}
            finalization.advance(spark, control, name, end)
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    # Out of order, at the same time, on one name and on another.
    threads = [threading.Thread(target=advance, args=(h, "bronze.a")) for h in reversed(hours)]
    threads += [threading.Thread(target=advance, args=(h, "bronze.b")) for h in hours[:2]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    rows = {r["table_name"]: r for r in spark.table(control).collect()}
    assert sorted(rows) == ["bronze.a", "bronze.b"] and spark.table(control).count() == 2
    last = hours[-1]
    assert rows["bronze.a"]["finalized_until"].hour == last and rows["bronze.a"]["end_lsn"] == f"0x{last:020X}"
    assert rows["bronze.b"]["finalized_until"].hour == 2
    # An older offset moves nothing and returns the verdict as it stands.
    back = finalization.advance(spark, control, "bronze.a", {"lsn": f"0x{2:020X}",
                                                            "commit_ts": "2026-01-01T02:30:00.000"})
    assert back.hour == last and finalization.finalized_until(spark, control, "bronze.a").hour == last
    assert finalization.finalized_until(spark, control, "bronze.none") is None
    # The engine reads the row Spark hands it: a UTC time whatever the session's time zone.
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        assert finalization.finalized_until(spark, control, "bronze.a") == datetime(2026, 1, 1, last)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


@pytest.mark.parametrize("target, facts, message", [
    ("a.b.c.d", None, "has 4 parts; a name has at most 3"),
    ("lake..t", None, "has an empty part"),
    ("bronze orders", None, "is neither a letter"),
    ("nowhere.t", None, "schema `nowhere` does not exist; create it first with CREATE SCHEMA IF NOT EXISTS `nowhere`"),
    ("lake.t", "nowhere.facts", "schema `nowhere` does not exist"),
    ("lake.a_view", None, "is a view"),
    ("lake.not_bronze", None, "is not a bronze table: it has no '_capture_instance' column"),
    ("lake.t", "lake.not_bronze", "is not a facts table"),
    ("lake.wrong_types", None, "_start_lsn"),
    ("relative/bronze", None, "is a relative path"),
])
@pytest.mark.connect
def test_bad_table_names_are_refused_before_anything_is_written(spark, shop, lake, tmp_path, target, facts, message):
    from mssql_cdc import ConfigError, stream

    spark.sql("CREATE TABLE lake.not_bronze (id INT) USING delta")
    spark.sql("CREATE VIEW lake.a_view AS SELECT 1 AS id")
    spark.sql("CREATE TABLE lake.wrong_types (_capture_instance STRING, _start_lsn BIGINT, _seqval STRING, "
              "_operation INT, _commit_ts TIMESTAMP_NTZ) USING delta")
    before = {r["tableName"] for r in spark.sql("SHOW TABLES IN lake").collect()}
    options = dict(sim_options(shop), captureInstance="dbo_orders")
    with pytest.raises((ConfigError, Exception), match=message.replace("(", r"\(").replace(")", r"\)")):
        stream(spark, options).to_delta(target, "orders-v1", f"{tmp_path}/ckpt", facts)
    assert {r["tableName"] for r in spark.sql("SHOW TABLES IN lake").collect()} == before
    assert not (tmp_path / "ckpt").exists() and spark.streams.active == []


def test_a_bad_control_table_is_refused(spark, lake):
    from mssql_cdc import ConfigError, finalization

    spark.sql("CREATE TABLE lake.facts_like (app_id STRING) USING delta")
    end = {"lsn": f"0x{1:020X}", "commit_ts": "2026-01-01T01:30:00.000"}
    with pytest.raises(ConfigError, match="is not a control table: it has no 'table_name' column"):
        finalization.advance(spark, "lake.facts_like", "bronze.a", end)
    with pytest.raises(ConfigError, match="schema `nope` does not exist"):
        finalization.advance(spark, "nope.control", "bronze.a", end)
    with pytest.raises(ConfigError, match="has 4 parts"):
        finalization.finalized_until(spark, "a.b.c.d", "bronze.a")
    assert not spark.catalog.tableExists("nope.control")


def test_freshness_says_how_old_a_verdict_is_by_name_and_by_path(spark, lake, tmp_path):
    from datetime import timedelta

    from mssql_cdc import NotFoundError, finalization

    for control in ("lake.control", str(tmp_path / "control")):
        with pytest.raises(NotFoundError, match="does not exist"):
            finalization.freshness(spark, control, "bronze.a")
        end = {"lsn": f"0x{1:020X}", "commit_ts": "2026-01-01T01:30:00.000"}
        finalization.advance(spark, control, "bronze.a", end)
        got = finalization.freshness(spark, control, "bronze.a")
        now = datetime.utcnow()
        assert got["table_name"] == "bronze.a" and got["finalized_until"] == datetime(2026, 1, 1, 1, 0)
        assert now - timedelta(minutes=5) < got["updated_at"] <= now
        assert got["age_seconds"] == pytest.approx((now - datetime(2026, 1, 1, 1, 0)).total_seconds(), abs=300)
        assert 0 <= got["seconds_since_update"] < 300 and got["open_snapshot_lsn"] is None
        assert finalization.freshness(spark, control, "bronze.b") == {
            "table_name": "bronze.b", "finalized_until": None, "updated_at": None, "age_seconds": None,
            "seconds_since_update": None, "open_snapshot_lsn": None}


# The guide's first example, run as written in a new process with its own metastore; a second
# process then finds its tables by name and runs the seed documents' consumer queries.
_WRITER = """
import sys
sys.path[:0] = [{tests!r}, {spark_tests!r}]
from local_spark import local_spark
from spark_helpers import reset_guide_tables, sim_options
spark = local_spark("writer", {warehouse!r}, hive=True, short_lived=True)
reset_guide_tables(spark)
shop = {shop!r}
########## the guide's example: only `options` differs
from mssql_cdc import await_all, finalization, start_many

options = sim_options(shop)
queries = start_many(
    spark,
    options,
    ["dbo_orders", "dbo_order_items", "dbo_customers"],
    target="bronze.{{ci}}",
    app_id="{{ci}}-v1",
    checkpoint="/Volumes/main/ops/checkpoints/{{ci}}",
    facts_table="ops.ingestion_facts",
    trigger={{"availableNow": True}},
)
failed = await_all(queries)

for ci, query in queries.items():
    if ci not in failed:
        end = finalization.end_offset_from_progress(query.lastProgress)
        finalization.advance(spark, "ops.table_finalization", f"bronze.{{ci}}", end)
if failed:
    raise RuntimeError(f"CDC streams failed: {{sorted(failed)}}")  # fail the run, alert
##########
spark.stop()
"""

_READER = """
import json, sys
sys.path[:0] = [{tests!r}]
from local_spark import local_spark
spark = local_spark("reader", {warehouse!r}, hive=True, short_lived=True)
out = {{}}
out["bronze"] = {{ci: spark.table(f"bronze.{{ci}}").count() for ci in ("dbo_orders", "dbo_order_items", "dbo_customers")}}
health = open({health!r}).read()
out["health"] = [r.asDict() for r in spark.sql(health).collect()]
# The Airflow sensor of the seed's "Consumers", on this catalog's names.
out["sensor"] = spark.sql("SELECT 1 FROM ops.table_finalization WHERE table_name = 'bronze.dbo_orders' "
                          "AND finalized_until >= '2026-01-01 00:00:00'").count()
out["verdicts"] = {{r["table_name"]: str(r["finalized_until"]) for r in spark.table("ops.table_finalization").collect()}}
print(json.dumps(out, default=str))
spark.stop()
"""


def health_query():
    """The health query of docs/monitoring.md, as shipped."""
    text = (ROOT / "docs" / "monitoring.md").read_text()
    return text.split("```sql\n", 1)[1].split("```", 1)[0]


# Not rerun through Spark Connect: both processes run classic sessions of their own whichever
# session the suite runs on, so a second run would repeat the first.
def test_a_new_process_finds_the_tables_by_name_and_runs_the_consumer_queries(shop, tmp_path, cli):
    warehouse = tmp_path / "warehouse"
    health = tmp_path / "health.sql"
    health.write_text(health_query())
    params = dict(tests=str(ROOT / "tests"), spark_tests=str(ROOT / "tests" / "spark"), warehouse=str(warehouse),
                  shop=str(shop), health=str(health))
    # Classic sessions of their own, whichever session the suite runs on.
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    env["PYSPARK_PYTHON"] = sys.executable
    with guide_checkpoints_held():
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(_WRITER.format(**params))], env=env,
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    read = subprocess.run([sys.executable, "-c", _READER.format(**params)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert read.returncode == 0, read.stderr[-3000:]
    out = json.loads(read.stdout.strip().splitlines()[-1])
    from spark_helpers import change_table

    assert out["bronze"] == {ci: change_table(shop, ci).num_rows
                             for ci in ("dbo_orders", "dbo_order_items", "dbo_customers")}
    assert out["sensor"] == 1
    assert set(out["verdicts"]) == {"bronze.dbo_orders", "bronze.dbo_order_items", "bronze.dbo_customers"}
    # One health row per target, with the measured columns Spark mode fills from its metrics files.
    # The simulated clock stands in 2026-01-01, so the capture lag is large and every target alerts.
    rows = {r["target"]: r for r in out["health"]}
    assert set(rows) == {"bronze.dbo_orders", "bronze.dbo_order_items", "bronze.dbo_customers"}
    for row in rows.values():
        assert 0 <= row["hours_since_last"] < 1  # just written
        assert row["headroom_hours"] is not None and row["headroom_hours"] >= 0
        assert row["ingestion_lag_seconds"] is not None and row["ingestion_lag_seconds"] >= 0
        assert row["capture_lag_seconds"] > 600 and row["alert"] is True


@pytest.mark.connect
def test_track_on_a_query_that_already_finished_writes_its_verdict(spark, shop, lake, tmp_path):
    from mssql_cdc import finalization, stream

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    query = stream(spark, options).to_delta("lake.orders", "orders-v1", f"{tmp_path}/ckpt",
                                            trigger={"availableNow": True})
    query.awaitTermination()
    tracker = finalization.track(spark, query, "lake.control", "lake.orders")
    assert tracker.join(timeout=60) and tracker.last_error is None
    end = finalization.end_offset_from_progress(query.lastProgress)
    assert finalization.finalized_until(spark, "lake.control", "lake.orders") == finalization.candidate(end)
