"""The reference library's table helpers on this engine: migrations (``ensure``, ``migrate``,
``add_columns``, ``set_comments``, each kind's steps), ``tables.create_if_not_exists`` and
``commit_after``, and the facts and bronze row helpers, by name and at a path, and what a table a
newer release migrated meets: a refusal before anything is written."""

import re
from datetime import datetime

import pytest

from mssql_cdc import events, migrations, sink, tables
from mssql_cdc.errors import ConfigError
from mssql_cdc.migrations import control as control_migrations
from mssql_cdc.migrations import facts as facts_migrations


@pytest.fixture
def lake(spark):
    spark.sql("DROP SCHEMA IF EXISTS helpers CASCADE")
    spark.sql("CREATE SCHEMA helpers")
    yield "helpers"
    spark.sql("DROP SCHEMA IF EXISTS helpers CASCADE")


def columns_of(spark, table):
    frame = spark.read.format("delta").load(table) if "/" in table else spark.table(table)
    return [(f.name, f.dataType.simpleString().upper(), f.metadata.get("comment")) for f in frame.schema.fields]


def properties_of(spark, table):
    return {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {tables.table_ref(table)}").collect()}


@pytest.mark.parametrize("where", ["name", "path"])
def test_migrate_brings_a_first_version_facts_table_up_to_date_and_stamps_it(spark, lake, tmp_path, where):
    table = "helpers.facts" if where == "name" else f"{tmp_path}/facts"
    # The engine's facts table has required columns every version had: event, end_lsn among them.
    tables.create_if_not_exists(spark, table, [c for c in sink.FACTS_COLUMNS
                                               if c[0] in ("app_id", "batch_id", "rows", "event", "end_lsn",
                                                           "target")], "an old facts table", {})
    assert migrations.migrate(spark, table, "facts") == migrations.current_version("facts") == 14
    assert sorted(c[:2] for c in columns_of(spark, table)) == sorted(c[:2] for c in sink.FACTS_COLUMNS)
    assert properties_of(spark, table)[migrations.SCHEMA_VERSION_PROPERTY] == "14"
    # Migrating again changes nothing.
    version = tables.version(spark, table)
    assert migrations.migrate(spark, table, "facts") == 14
    assert tables.version(spark, table) == version


def test_each_kinds_steps_lead_to_the_columns_migrate_gives(spark, lake):
    """Run one at a time from a version-0 control table, 0.8.0's control steps give the columns
    and comments of the engine's control table."""
    base = [c for c in _control_columns() if c[0] not in {n for n, _, _ in control_migrations.APPLIED_COLUMNS
                                                           + control_migrations.WAVE_COLUMNS}]
    tables.create_if_not_exists(spark, "helpers.control", base, "a control table of 0.8.0's first release", {})
    for step in control_migrations.MIGRATIONS:
        step.apply(spark, "helpers.control")
    assert columns_of(spark, "helpers.control") == [(n, t, c) for n, t, c in _control_columns()]
    assert len(control_migrations.MIGRATIONS) == migrations.current_version("control")
    assert len(facts_migrations.MIGRATIONS) == migrations.current_version("facts")


def _control_columns():
    from mssql_cdc import finalization

    return finalization.CONTROL_COLUMNS


@pytest.mark.parametrize("property_name", ["mssql_cdc.schema_version", "mssql_cdc.min_version"])
def test_a_table_a_newer_release_migrated_is_refused_before_anything_is_written(spark, shop, tmp_path,
                                                                                 property_name):
    from spark_helpers import sim_options

    from mssql_cdc import stream

    facts = f"{tmp_path}/facts"
    migrations.ensure(spark, facts, "facts", sink.FACTS_COLUMNS, sink.FACTS_COMMENT)
    spark.sql(f"ALTER TABLE {tables.table_ref(facts)} SET TBLPROPERTIES ('{property_name}' = '15')")
    version = tables.version(spark, facts)
    with pytest.raises(ConfigError, match="this release knows 14: upgrade mssql-cdc"):
        migrations.migrate(spark, facts, "facts")
    with pytest.raises(ConfigError, match="this release knows 14"):
        sink.write_facts(spark, facts, [{"app_id": "a", "rows": 0}], None, 0)
    options = dict(sim_options(shop), captureInstance="dbo_orders")
    with pytest.raises(Exception, match="this release knows 14"):
        stream(spark, options).to_delta(f"{tmp_path}/bronze", "t-v1", f"{tmp_path}/ckpt", facts,
                                        trigger={"availableNow": True})
    assert tables.version(spark, facts) == version
    assert not (tmp_path / "bronze").exists() and not (tmp_path / "ckpt").exists()


def test_create_add_columns_and_comments_by_name(spark, lake):
    from pyspark.sql.types import LongType

    tables.create_if_not_exists(spark, "helpers.t", [("id", LongType(), "the key"), ("Qty (kg)", "double", None)],
                                "a table", {"app.owner": "ops"})
    assert properties_of(spark, "helpers.t")["delta.columnMapping.mode"] == "name"
    assert properties_of(spark, "helpers.t")["app.owner"] == "ops"
    # Created once: a second call leaves the table as it is.
    tables.create_if_not_exists(spark, "helpers.t", [("other", "int", None)])
    assert [c[0] for c in columns_of(spark, "helpers.t")] == ["id", "Qty (kg)"]
    migrations.add_columns(spark, "helpers.t", [("ID", "bigint", None), ("note", "string", "free text")])
    migrations.add_columns(spark, "helpers.t", [("note", "string", "free text")])
    assert columns_of(spark, "helpers.t")[2] == ("note", "STRING", "free text")
    migrations.set_comments(spark, "helpers.t", {"id": "the order's key"}, table_comment="orders, by hand")
    assert columns_of(spark, "helpers.t")[0] == ("id", "BIGINT", "the order's key")
    detail = spark.sql("DESCRIBE DETAIL helpers.t").collect()[0]
    assert detail["description"] == "orders, by hand"
    with pytest.raises(ConfigError, match="is not a Spark SQL type"):
        tables.create_if_not_exists(spark, "helpers.u", [("id", "bigint) USING parquet --", None)])
    assert not spark.catalog.tableExists("helpers.u")


def test_facts_rows_written_read_and_found_by_commit(spark, lake):
    facts = "helpers.facts"
    with pytest.raises(ConfigError, match=r"unknown facts columns: \['row_count'\]"):
        sink.write_facts(spark, facts, [{"app_id": "a", "row_count": 3}], None, 0)
    assert not spark.catalog.tableExists(facts)
    sink.write_facts(spark, facts, [{"app_id": "orders-v1", "batch_id": 0, "rows": 3, "target": "bronze.orders"}],
                     "orders-v1#facts", 0)
    sink.write_facts(spark, facts, [{"app_id": "orders-v1", "batch_id": 0, "rows": 3, "target": "bronze.orders"}],
                     "orders-v1#facts", 0)  # the same txn: skipped
    before = tables.version(spark, facts)
    events.write_event(spark, facts, events.SCHEMA_CHANGE, app_id="orders-v1", txn_app_id=None, version=0,
                       target="bronze.orders", lsn="0x0000002A000000100003", commit_ts="2026-12-06T10:00:00",
                       detail="ALTER TABLE dbo.orders ADD note nvarchar(50)")
    rows = events.read(spark, facts, "bronze.orders", [events.SCHEMA_CHANGE], ["min_lsn", "end_lsn", "detail",
                                                                               "max_commit_ts"])
    assert [r.asDict() for r in rows] == [{"min_lsn": "0x0000002A000000100003", "end_lsn": "0x0000002A000000100003",
                                           "detail": "ALTER TABLE dbo.orders ADD note nvarchar(50)",
                                           "max_commit_ts": datetime(2026, 12, 6, 10, 0)}]
    assert events.read(spark, facts, "bronze.orders", [events.SCHEMA_CHANGE], ["rows"], app_id=re.compile("orders-.*"))
    assert events.read(spark, facts, "bronze.orders", [events.SCHEMA_CHANGE], ["rows"], app_id="other") == []
    assert spark.table(facts).where("batch_id = 0").count() == 1
    assert tables.commit_after(spark, facts, before - 1, "no such metadata") is None
    assert tables.commit_after(spark, facts, before, "x") is None


def test_bronze_rows_and_batch_facts(spark):
    frame = spark.createDataFrame(
        [("dbo_orders", "0x0000002A000000100003", "0x0000002A000000100003", 2, datetime(2026, 12, 6, 10), 1),
         ("dbo_orders", "0x0000002A000000200003", "0x0000002A000000200003", 4, datetime(2026, 12, 6, 11), 1)],
        "_capture_instance string, _start_lsn string, _seqval string, _operation int, _commit_ts timestamp_ntz, "
        "id int")
    assert sink.batch_facts(frame) == {
        "rows": 2, "min_lsn": "0x0000002A000000100003", "max_lsn": "0x0000002A000000200003",
        "min_commit_ts": datetime(2026, 12, 6, 10), "max_commit_ts": datetime(2026, 12, 6, 11),
        "deletes": 0, "inserts": 1, "updates": 1}
    rows = sink.bronze_rows(frame, 7)
    assert rows.columns[-3:] == ["_batch_id", "_snapshot", "_chunk"]
    assert {r["_batch_id"] for r in rows.collect()} == {7}
    columns = sink.bronze_columns(frame)
    assert [c[0] for c in columns] == frame.columns + ["_batch_id", "_snapshot", "_chunk"]
    assert columns[-3][1:] == ("INT", sink.BRONZE_COLUMN_COMMENTS["_batch_id"])


def listing(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file())


def test_a_checkpoint_this_release_cannot_read_is_refused_before_anything_is_written(spark, shop, tmp_path):
    from spark_helpers import sim_options

    from mssql_cdc import stream

    options = dict(sim_options(shop), captureInstance="dbo_orders")

    def start():
        query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt",
                                                f"{tmp_path}/facts", trigger={"availableNow": True})
        query.awaitTermination()

    start()
    newest = max((tmp_path / "ckpt" / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    kept = newest.read_text()
    assert kept.splitlines()[0] == "v1"
    before = listing(tmp_path)
    for damaged, says in [("v9\n" + kept.split("\n", 1)[1], "an offset log entry of version 'v9'"),
                          ("\n".join(kept.splitlines()[:2] + ['{"offset": 12}']) + "\n",
                           "holds a source offset this release does not read")]:
        newest.write_text(damaged)
        with pytest.raises(ConfigError, match=says) as refused:
            start()
        assert "give a new checkpoint" in str(refused.value)
        assert [f for f in listing(tmp_path) if f[0] != str(newest.relative_to(tmp_path))] == [
            f for f in before if f[0] != str(newest.relative_to(tmp_path))]
    newest.write_text(kept)
    start()


def test_a_new_stream_into_a_bronze_another_stream_wrote_is_refused_unless_told_where_to_start(spark, shop, tmp_path):
    from spark_helpers import sim_options

    from mssql_cdc import stream

    options = dict(sim_options(shop), captureInstance="dbo_orders")

    def start(app_id, **more):
        query = stream(spark, dict(options, **more)).to_delta(
            f"{tmp_path}/bronze", app_id, f"{tmp_path}/ckpt-{app_id}", f"{tmp_path}/facts",
            trigger={"availableNow": True})
        query.awaitTermination()

    start("orders-v1")
    end_lsn = max(r["end_lsn"] for r in spark.read.format("delta").load(f"{tmp_path}/facts").collect())
    before = listing(tmp_path)
    with pytest.raises(ConfigError, match=r"holds micro-batches of another stream \(app_id 'orders-v1'\)"):
        start("orders-v2")
    assert listing(tmp_path) == before
    start("orders-v2", startingLsn=end_lsn)
    rows = spark.read.format("delta").load(f"{tmp_path}/bronze").groupBy("_start_lsn", "_seqval", "_operation").count()
    assert rows.where("count > 1").count() == 0
