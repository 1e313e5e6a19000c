"""Schema changes on Spark (docs/schema-changes.md): a newer capture instance with a new column
stops the running query at its start with "The stream reaches capture instance", the restart
infers the new column and goes on, every change once (the older instance below the start, the
newer from it), with one capture_instance_switched and one schema_change facts row; a type the
query cannot hold fails the batch before reading; schemaChangePolicy=fail stops at any DDL."""

import json

import pytest
from spark_helpers import change_table, delta, row_key, sim_options, wait_for, workload

from mssql_cdc import _core, await_all, is_schema_changed, register, stream
from mssql_cdc.errors import SchemaChangedError

OLD, NEW = "dbo_orders", "dbo_orders_v2"


def run(spark, db, tmp_path, **extra):
    options = dict(sim_options(db), captureInstance=OLD, **extra)
    query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt",
                                            f"{tmp_path}/facts", trigger={"availableNow": True})
    return await_all({OLD: query}).get(OLD)


def running(spark, db, tmp_path, **extra):
    """A query of the default trigger, once it has written its first batch."""
    options = dict(sim_options(db), captureInstance=OLD, **extra)
    query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt",
                                            f"{tmp_path}/facts")
    wait_for(lambda: delta_rows(tmp_path) > 0, what="the first batch")
    return query


def delta_rows(tmp_path):
    try:
        return delta(f"{tmp_path}/bronze").num_rows
    except Exception:  # noqa: BLE001 (not created yet)
        return 0


def events(tmp_path, event):
    return sorted((r["min_lsn"], r["detail"]) for r in delta(f"{tmp_path}/facts").to_pylist()
                  if r["event"] == event)


def insert_order(cli, db, **values):
    """One more order: a copy of the last captured one with `values` set."""
    last = change_table(db, OLD).to_pylist()[-1]
    row = {k: (v.isoformat(sep=" ") if hasattr(v, "isoformat") else v) for k, v in last.items()
           if not k.startswith("_")}
    row.update(order_id=10_000_000, **values)
    cli("sim", "dml", "--db", db, "--json", json.dumps([{"op": "insert", "table": "dbo.orders", "row": row}],
                                                       default=str))


def switch_to_a_new_instance(cli, db):
    cli("sim", "add-column", "--db", db, "--table", "dbo.orders", "--column", "note varchar(20)")
    cli("sim", "enable-cdc", "--db", db, "--table", "dbo.orders", "--capture-instance", NEW)


@pytest.mark.connect
def test_a_new_instance_stops_the_query_at_its_start_and_the_restart_goes_on(spark, shop, cli, tmp_path):
    query = running(spark, shop, tmp_path)
    switch_to_a_new_instance(cli, shop)
    workload(cli, shop, 20, seed=21, tables=["dbo.orders"])
    s = _core.open_sim_source(str(shop)).min_lsn(NEW)  # the enable's LSN, where NEW takes over

    error = await_all({OLD: query}).get(OLD)
    assert error is not None and is_schema_changed(error)
    assert f"The stream reaches capture instance '{NEW}' (from LSN " in str(error)
    assert max(r["_start_lsn"] for r in delta(f"{tmp_path}/bronze").to_pylist()) < s

    assert run(spark, shop, tmp_path) is None
    bronze = delta(f"{tmp_path}/bronze").to_pylist()
    keys = [row_key(r) for r in bronze]
    assert len(keys) == len(set(keys)), "bronze holds a change twice"
    expected = [r for r in change_table(shop, OLD).to_pylist() if r["_start_lsn"] < s]
    expected += change_table(shop, NEW).to_pylist()
    assert sorted(keys) == sorted(row_key(r) for r in expected)
    assert all(r["_capture_instance"] == (NEW if r["_start_lsn"] >= s else OLD) for r in bronze)
    assert "note" in bronze[0] and any(r["note"] is not None for r in bronze)
    assert events(tmp_path, "capture_instance_switched") == [(s, f"{OLD} -> {NEW}")]
    assert [detail for _, detail in events(tmp_path, "schema_change")] == [
        "ALTER TABLE [dbo].[orders] ADD [note] varchar(20) NULL"]

    # The old instance may go once the switch is in the facts: the stream goes on.
    cli("sim", "disable-cdc", "--db", shop, "--capture-instance", OLD)
    workload(cli, shop, 5, seed=22, tables=["dbo.orders"])
    assert run(spark, shop, tmp_path) is None
    assert len(delta(f"{tmp_path}/bronze").to_pylist()) == len(expected) + len(
        [r for r in change_table(shop, NEW).to_pylist() if r["_start_lsn"] > max(keys)[0]])
    assert len(events(tmp_path, "capture_instance_switched")) == 1


def test_a_type_the_query_cannot_hold_fails_the_batch_before_reading(spark, shop, cli, tmp_path):
    query = running(spark, shop, tmp_path)
    wait_for(lambda: delta_rows(tmp_path) == change_table(shop, OLD).num_rows, what="the backlog")
    rows = delta(f"{tmp_path}/bronze").num_rows
    cli("sim", "alter-column", "--db", shop, "--table", "dbo.orders", "--column", "status varchar(40) not null")
    cli("sim", "alter-column", "--db", shop, "--table", "dbo.orders", "--column", "customer_id bigint not null")
    workload(cli, shop, 5, seed=23, tables=["dbo.orders"])
    error = await_all({OLD: query}).get(OLD)
    assert error is not None and is_schema_changed(error)
    assert "customer_id BIGINT" in str(error) and "Nothing of the batch was read" in str(error)
    assert delta(f"{tmp_path}/bronze").num_rows == rows


def test_schema_change_policy_fail_stops_at_any_ddl(spark, shop, cli, tmp_path):
    assert run(spark, shop, tmp_path) is None
    cli("sim", "add-column", "--db", shop, "--table", "dbo.orders", "--column", "note varchar(20)")
    workload(cli, shop, 5, seed=24, tables=["dbo.orders"])
    error = run(spark, shop, tmp_path, schemaChangePolicy="fail")
    assert error is not None and is_schema_changed(error)
    assert "schemaChangePolicy=fail stops at any DDL" in str(error)
    assert run(spark, shop, tmp_path) is None
    assert [d for _, d in events(tmp_path, "schema_change")] == [
        "ALTER TABLE [dbo].[orders] ADD [note] varchar(20) NULL"]


def test_the_columns_option_reads_its_columns_across_a_switch_without_stopping(spark, shop, cli, tmp_path):
    query = running(spark, shop, tmp_path, columns="order_id BIGINT, Status STRING")
    switch_to_a_new_instance(cli, shop)
    workload(cli, shop, 10, seed=25, tables=["dbo.orders"])
    s = _core.open_sim_source(str(shop)).min_lsn(NEW)
    wait_for(lambda: any(r["_start_lsn"] > s for r in delta(f"{tmp_path}/bronze").to_pylist())
             and events(tmp_path, "capture_instance_switched"), what="the switch in bronze and the facts")
    query.stop()
    bronze = delta(f"{tmp_path}/bronze")
    assert [c for c in bronze.column_names if not c.startswith("_")] == ["order_id", "status"]
    switched = events(tmp_path, "capture_instance_switched")
    assert len(switched) == 1 and switched[0][1].startswith(f"{OLD} -> {NEW}; left out by the columns option: ")
    assert "note STRING" in switched[0][1]


def test_a_listed_column_no_instance_captures_is_refused_before_anything_is_written(spark, shop, tmp_path):
    with pytest.raises(ValueError, match="No capture instance of dbo.orders captures column 'colour'"):
        run(spark, shop, tmp_path, columns="order_id BIGINT, colour STRING")
    assert not (tmp_path / "bronze").exists() and not (tmp_path / "ckpt").exists()


def test_a_widened_column_reaches_bronze_where_type_widening_is_on(spark, shop, cli, tmp_path):
    """Spark mode: after the batch that meets the widening fails, type widening on bronze and a
    restart give bronze the wider type; the values past the old type's range arrive."""
    query = running(spark, shop, tmp_path)
    wait_for(lambda: delta_rows(tmp_path) == change_table(shop, OLD).num_rows, what="the backlog")
    cli("sim", "alter-column", "--db", shop, "--table", "dbo.orders", "--column", "customer_id bigint not null")
    workload(cli, shop, 3, seed=26, tables=["dbo.orders"])
    error = await_all({OLD: query}).get(OLD)
    assert error is not None and is_schema_changed(error)
    spark.sql(f"ALTER TABLE delta.`{tmp_path}/bronze` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    assert run(spark, shop, tmp_path) is None
    assert spark.read.format("delta").load(f"{tmp_path}/bronze").schema["customer_id"].dataType.simpleString() == "bigint"
    assert sorted(row_key(r) for r in delta(f"{tmp_path}/bronze").to_pylist()) == sorted(
        row_key(r) for r in change_table(shop, OLD).to_pylist())


@pytest.mark.connect
def test_a_widened_column_reaches_a_named_bronze_where_type_widening_is_on(spark, shop, cli, tmp_path,
                                                                          guide_tables):
    """The seed's "Running on Databricks" item 7 with the names it uses: the start that meets the
    widening is refused with the ALTER TABLE to run on the table's name; the seed's statement and
    a restart give bronze.tw the wider type, and the values past int's range arrive."""
    def run_named():
        options = dict(sim_options(shop), captureInstance=OLD)
        query = stream(spark, options).to_delta("bronze.tw", "tw-v1", f"{tmp_path}/ckpt", f"{tmp_path}/facts",
                                                trigger={"availableNow": True})
        return await_all({OLD: query}).get(OLD)

    assert run_named() is None
    cli("sim", "alter-column", "--db", shop, "--table", "dbo.orders", "--column", "customer_id bigint not null")
    insert_order(cli, shop, customer_id=5_000_000_000)  # past int's range, as the seed's page writes
    # The start after the DDL is refused by to_delta's checks, before anything is written.
    with pytest.raises(SchemaChangedError) as refused:
        run_named()
    assert "ALTER TABLE `bronze`.`tw` SET TBLPROPERTIES ('delta.enableTypeWidening'='true')" in str(refused.value)
    spark.sql("ALTER TABLE spark_catalog.bronze.tw SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    assert run_named() is None
    assert spark.table("bronze.tw").schema["customer_id"].dataType.simpleString() == "bigint"
    assert spark.table("bronze.tw").agg({"customer_id": "max"}).collect()[0][0] == 5_000_000_000
    assert sorted(row_key(r) for r in spark.table("bronze.tw").toArrow().to_pylist()) == sorted(
        row_key(r) for r in change_table(shop, OLD).to_pylist())


def test_a_native_stream_widens_bronze_in_place_and_spark_reads_it(spark, cli, tmp_path):
    """Natively: type widening turned on from Spark; the native stream then widens bronze in
    the same run and goes on. Spark reads the widened table; delta-rs refuses it (it does not
    implement the typeWidening reader feature), as asserted."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaProtocolError

    db = tmp_path / "items.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "create-table", "--db", db, "--table", "dbo.items", "--column", "id int not null",
        "--column", "qty int", "--key", "id")
    cli("sim", "dml", "--db", db, "--json", '[{"op": "insert", "table": "dbo.items", "row": {"id": 1, "qty": 5}}]')
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(f"""tables = ["dbo_items"]
[source]
backend = "sim"
simPath = "{db}"
sourceTimeZone = "UTC"
[stream]
target = "{tmp_path}/lake/{{ci}}"
app_id = "{{ci}}-v1"
checkpoint = "{tmp_path}/checkpoints/{{ci}}"
facts_table = "{tmp_path}/lake/facts"
trigger = "availableNow"
""")
    cli("run", pipeline)
    bronze = f"{tmp_path}/lake/dbo_items"
    spark.sql(f"ALTER TABLE delta.`{bronze}` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    cli("sim", "alter-column", "--db", db, "--table", "dbo.items", "--column", "qty bigint")
    cli("sim", "dml", "--db", db, "--json",
        '[{"op": "insert", "table": "dbo.items", "row": {"id": 2, "qty": 6000000000}}]')
    cli("run", pipeline)
    read = spark.read.format("delta").load(bronze)
    assert read.schema["qty"].dataType.simpleString() == "bigint"
    assert sorted(r["qty"] for r in read.collect()) == [5, 6000000000]
    with pytest.raises(DeltaProtocolError, match="typeWidening"):
        DeltaTable(bronze).to_pyarrow_table()


def test_snapshot_on_switch_gives_unchanged_rows_the_new_column_once(spark, shop, cli, tmp_path):
    assert run(spark, shop, tmp_path) is None
    cli("sim", "add-column", "--db", shop, "--table", "dbo.orders", "--column", "note varchar(20)")
    # The DBA fills the new column before enabling the instance that captures it.
    some = 900000001
    cli("sim", "dml", "--db", shop, "--json", json.dumps([
        {"op": "insert", "table": "dbo.orders",
         "row": {"order_id": some, "customer_id": 1, "order_date": "2026-01-01 10:00:00", "status": "new",
                 "total": "1.00"}},
        {"op": "update", "table": "dbo.orders", "key": {"order_id": some}, "set": {"note": "filled"}}]))
    cli("sim", "enable-cdc", "--db", shop, "--table", "dbo.orders", "--capture-instance", NEW)
    workload(cli, shop, 5, seed=27, tables=["dbo.orders"])
    options = dict(sim_options(shop), captureInstance=OLD)
    for _ in range(2):  # the second run finds the switch snapshot taken
        query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt",
                                                f"{tmp_path}/facts", trigger={"availableNow": True},
                                                snapshot_on_switch=True)
        assert await_all({OLD: query}) == {}
    snapshot = [r for r in delta(f"{tmp_path}/bronze").to_pylist() if r["_operation"] == 0]
    ids = [r["order_id"] for r in snapshot]
    assert len(ids) == len(set(ids)) > 0
    assert {r["order_id"]: r["note"] for r in snapshot}[some] == "filled"
    assert {r["_capture_instance"] for r in snapshot} == {NEW}


def test_snapshot_on_switch_with_a_chunked_snapshot_is_refused_before_anything_is_written(spark, shop, tmp_path):
    with pytest.raises(ValueError, match='snapshot_on_switch=True cannot be combined with snapshot="chunked"'):
        stream(spark, dict(sim_options(shop), captureInstance=OLD)).to_delta(
            f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt", f"{tmp_path}/facts", bootstrap=True,
            snapshot="chunked", snapshot_on_switch=True)
    assert not (tmp_path / "bronze").exists() and not (tmp_path / "ckpt").exists()
    assert not (tmp_path / "facts").exists()


def test_two_instances_typing_a_column_incompatibly_are_refused_before_anything_is_written(spark, shop, cli,
                                                                                          tmp_path):
    # shipped becomes a string in a newer instance: no one type holds both.
    cli("sim", "drop-column", "--db", shop, "--table", "dbo.orders", "--column", "shipped")
    cli("sim", "add-column", "--db", shop, "--table", "dbo.orders", "--column", "shipped varchar(10)")
    cli("sim", "enable-cdc", "--db", shop, "--table", "dbo.orders", "--capture-instance", NEW)
    with pytest.raises(Exception, match="type column 'shipped' incompatibly") as refused:
        run(spark, shop, tmp_path)
    assert is_schema_changed(refused.value)
    assert not (tmp_path / "bronze").exists() and not (tmp_path / "ckpt").exists()
    # The columns option chooses the type to read with.
    assert run(spark, shop, tmp_path, columns="order_id BIGINT, shipped STRING") is None
    assert delta(f"{tmp_path}/bronze").schema.field("shipped").type == "string"


@pytest.mark.connect
def test_a_new_column_that_needs_column_mapping_gets_the_alter_then_goes_on(spark, shop, cli, tmp_path):
    """Bronze without column mapping meets "Unit price": the restart is refused before anything is
    written, with the ALTER TABLE that enables mapping; after it, the stream goes on. A new bronze
    table named in the catalog is created with mapping."""
    assert run(spark, shop, tmp_path) is None
    rows = delta_rows(tmp_path)
    cli("sim", "add-column", "--db", shop, "--table", "dbo.orders", "--column", "[Unit price] int")
    cli("sim", "enable-cdc", "--db", shop, "--table", "dbo.orders", "--capture-instance", NEW)
    workload(cli, shop, 10, seed=27, tables=["dbo.orders"])

    with pytest.raises(Exception) as refused:
        run(spark, shop, tmp_path)
    error = refused.value
    assert is_schema_changed(error), error
    alter = (f"ALTER TABLE delta.`{tmp_path}/bronze` SET TBLPROPERTIES ('delta.columnMapping.mode'='name', "
             f"'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')")
    assert "'Unit price'" in str(error) and alter in str(error)
    assert delta_rows(tmp_path) == rows

    spark.sql(alter)
    assert run(spark, shop, tmp_path) is None
    s = _core.open_sim_source(str(shop)).min_lsn(NEW)
    expected = [r for r in change_table(shop, OLD).to_pylist() if r["_start_lsn"] < s]
    expected += change_table(shop, NEW).to_pylist()
    bronze = spark.read.format("delta").load(f"{tmp_path}/bronze")
    assert "Unit price" in bronze.columns
    assert sorted(row_key(r.asDict()) for r in bronze.collect()) == sorted(row_key(r) for r in expected)
    assert sorted(row_key(r) for r in delta(f"{tmp_path}/bronze").to_pylist()) == sorted(
        row_key(r) for r in expected)

    spark.sql("DROP SCHEMA IF EXISTS mapped CASCADE")
    spark.sql("CREATE SCHEMA mapped")
    try:
        options = dict(sim_options(shop), captureInstance=NEW)
        query = stream(spark, options).to_delta("mapped.bronze_orders", "orders-v2", f"{tmp_path}/ckpt-named",
                                                trigger={"availableNow": True})
        assert await_all({NEW: query}).get(NEW) is None
        properties = {r["key"]: r["value"] for r in spark.sql("SHOW TBLPROPERTIES mapped.bronze_orders").collect()}
        assert properties["delta.columnMapping.mode"] == "name"
        assert spark.table("mapped.bronze_orders").count() == change_table(shop, NEW).num_rows
    finally:
        spark.sql("DROP SCHEMA IF EXISTS mapped CASCADE")


def test_a_bootstrap_reads_the_table_through_the_newest_instance(spark, shop, cli, tmp_path):
    """A query configured with the older instance bootstraps after the newer one took over: the
    snapshot is read through the newer instance, so its rows carry the new column's values."""
    switch_to_a_new_instance(cli, shop)
    workload(cli, shop, 30, seed=28, tables=["dbo.orders"])
    register(spark)
    table = (spark.read.format("mssql_cdc_snapshot").options(**sim_options(shop))
             .option("captureInstance", NEW).load())
    notes = {r["order_id"]: r["note"] for r in table.select("order_id", "note").collect()}
    assert any(note is not None for note in notes.values()), "the workload wrote no note"

    options = dict(sim_options(shop), captureInstance=OLD)
    query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt",
                                            f"{tmp_path}/facts", bootstrap=True, trigger={"availableNow": True})
    assert await_all({OLD: query}).get(OLD) is None
    snapshot = [r for r in delta(f"{tmp_path}/bronze").to_pylist() if r["_operation"] == 0]
    assert {r["order_id"]: r["note"] for r in snapshot} == notes
    assert {r["_capture_instance"] for r in snapshot} == {NEW}
