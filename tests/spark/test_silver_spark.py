"""apply_changes on Spark: silver kept from a bronze table a Spark stream writes equals the
source table after a bootstrap and after more changes; reruns change nothing; the native
engine's `apply-changes` and Spark's make the same silver of the same bronze; named tables go
through the catalog; bad input is refused before anything is written."""

import sqlite3

import pytest
from spark_helpers import native_silver_pipeline, sim_options, workload

COLUMNS = ["order_id", "customer_id", "status"]


def source_rows(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {tuple(str(v) for v in row) for row in conn.execute(f'SELECT {", ".join(COLUMNS)} FROM "dbo.orders"')}


def silver_rows(spark, silver):
    frame = spark.table(silver) if "/" not in silver else spark.read.format("delta").load(silver)
    rows = [tuple(str(r[c]) for c in COLUMNS) for r in frame.select(*COLUMNS).collect()]
    assert len(rows) == len(set(rows)), "one row per key"
    return set(rows)


def stream_once(spark, options, bronze, facts, ckpt, control, bootstrap=False):
    from mssql_cdc import finalization, stream

    query = stream(spark, options).to_delta(bronze, "orders-v1", ckpt, facts, trigger={"availableNow": True},
                                            bootstrap=bootstrap)
    query.awaitTermination()
    finalization.advance(spark, control, bronze, finalization.end_offset_from_progress(query.lastProgress))


def test_silver_equals_the_table_and_reruns_change_nothing(spark, shop, cli, tmp_path):
    from mssql_cdc import apply_changes

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    bronze, facts, control, silver = (f"{tmp_path}/bronze", f"{tmp_path}/facts", f"{tmp_path}/control",
                                      f"{tmp_path}/silver")
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control, bootstrap=True)
    first = apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)
    assert first["bronze_found"] and first["rebuilt"] and first["applied_lsn"]
    assert silver_rows(spark, silver) == source_rows(shop)

    workload(cli, shop, 100, 9, tables=["dbo.orders"])
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control)
    second = apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)
    assert not second["rebuilt"] and second["applied_lsn"] > first["applied_lsn"]
    assert silver_rows(spark, silver) == source_rows(shop)
    from mssql_cdc import finalization
    assert second["finalized_until"] == finalization.finalized_until(spark, control, bronze)

    version = spark.sql(f"DESCRIBE HISTORY delta.`{silver}` LIMIT 1").collect()[0]["version"]
    again = apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)
    assert again["applied_lsn"] == second["applied_lsn"] and not again["rebuilt"]
    assert spark.sql(f"DESCRIBE HISTORY delta.`{silver}` LIMIT 1").collect()[0]["version"] == version


def test_native_and_spark_make_the_same_silver(spark, shop, cli, tmp_path):
    from mssql_cdc import apply_changes

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    lake = tmp_path / "lake"
    bronze, facts, control = f"{lake}/bronze/dbo_orders", f"{lake}/facts", f"{lake}/control"
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control, bootstrap=True)
    workload(cli, shop, 100, 11, tables=["dbo.orders"])
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control)
    apply_changes(spark, bronze, f"{lake}/silver_spark", control_table=control, facts_table=facts, options=options)

    pipeline = native_silver_pipeline(tmp_path, shop, "dbo_orders", lake, facts, control)
    cli("apply-changes", pipeline)
    native = spark.read.format("delta").load(f"{lake}/silver_native/dbo_orders")
    on_spark = spark.read.format("delta").load(f"{lake}/silver_spark")
    assert native.columns == on_spark.columns
    assert native.count() == on_spark.count() > 0
    assert native.exceptAll(on_spark).count() == 0 and on_spark.exceptAll(native).count() == 0


@pytest.mark.connect
def test_named_tables_go_through_the_catalog(spark, shop, tmp_path):
    from mssql_cdc import apply_changes

    spark.sql("CREATE SCHEMA IF NOT EXISTS silver_test")
    try:
        options = dict(sim_options(shop), captureInstance="dbo_orders")
        stream_once(spark, options, "silver_test.bronze_orders", "silver_test.facts", f"{tmp_path}/ckpt",
                    "silver_test.control", bootstrap=True)
        result = apply_changes(spark, "silver_test.bronze_orders", "silver_test.orders",
                               control_table="silver_test.control", facts_table="silver_test.facts",
                               options=options)
        assert result["rebuilt"] and result["finalized_until"] is not None
        assert silver_rows(spark, "silver_test.orders") == source_rows(shop)
        properties = {r["key"]: r["value"] for r in spark.sql("SHOW TBLPROPERTIES silver_test.orders").collect()}
        assert properties["mssql_cdc.schema_version"] == "0" and "mssql_cdc.bronze_id" in properties
    finally:
        spark.sql("DROP SCHEMA IF EXISTS silver_test CASCADE")


def test_bad_input_is_refused_before_anything_is_written(spark, shop, tmp_path):
    from mssql_cdc import ConfigError, apply_changes

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    bronze, facts, control = f"{tmp_path}/bronze", f"{tmp_path}/facts", f"{tmp_path}/control"
    stream_once(spark, options, bronze, facts, f"{tmp_path}/ckpt", control, bootstrap=True)
    silver = f"{tmp_path}/silver"
    cases = [
        (dict(keys=["nope"], options=options), "'nope' is not a captured column of bronze"),
        (dict(keys=["_start_lsn"], options=options), "not a captured column"),
        (dict(keys=["order_id"]), "needs the capture instance"),
        (dict(options=options, granularity="week"), "granularity"),
        (dict(keys=["order_id"], capture_instance="dbo_customers"), "holds rows of capture instance 'dbo_orders'"),
    ]
    for kwargs, says in cases:
        with pytest.raises(ConfigError, match=says):
            apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, **kwargs)
        assert not (tmp_path / "silver").exists()
    # A silver table of another bronze.
    apply_changes(spark, bronze, silver, control_table=control, facts_table=facts, options=options)
    other = f"{tmp_path}/bronze2"
    stream_once(spark, options, other, facts, f"{tmp_path}/ckpt2", control, bootstrap=True)
    with pytest.raises(ConfigError, match="is kept from another bronze table"):
        apply_changes(spark, other, silver, control_table=control, facts_table=facts, options=options)
