"""Many tables on Spark: the examples of the "Many tables" guide, run exactly as written on a
simulated shop database (only the connection options differ, and the four-hour timeout), with
its table names in a Hive metastore and its /Volumes checkpoints, and what start_many,
await_all and stop_all promise around them: templates checked first, a failing start stopping
the queries already started, a failing table failing alone, restarts from the checkpoints."""

from datetime import timedelta
from pathlib import Path

import pytest
from spark_helpers import (TABLES, assert_bronze_equals_change_table, delta, sim_options, table_location, wait_for,
                           workload)

from mssql_cdc import _core


def verdicts(spark, control):
    return {row["table_name"]: row.asDict() for row in spark.table(control).collect()}


def facts_rows(spark, facts, target):
    return [row for row in delta(table_location(spark, facts)).to_pylist() if row["target"] == target]


def bronze_of(spark, ci):
    return table_location(spark, f"bronze.{ci}")


@pytest.mark.connect
def test_start_them_together_then_advance_each_verdict(spark, shop, cli, guide_tables):
    ########## the guide's example: only `options` differs
    from mssql_cdc import await_all, finalization, start_many

    options = sim_options(shop)
    queries = start_many(
        spark,
        options,
        ["dbo_orders", "dbo_order_items", "dbo_customers"],
        target="bronze.{ci}",
        app_id="{ci}-v1",
        checkpoint="/Volumes/main/ops/checkpoints/{ci}",
        facts_table="ops.ingestion_facts",
        trigger={"availableNow": True},
    )
    failed = await_all(queries)

    for ci, query in queries.items():
        if ci not in failed:
            end = finalization.end_offset_from_progress(query.lastProgress)
            finalization.advance(spark, "ops.table_finalization", f"bronze.{ci}", end)
    if failed:
        raise RuntimeError(f"CDC streams failed: {sorted(failed)}")  # fail the run, alert
    ##########

    assert list(queries) == ["dbo_orders", "dbo_order_items", "dbo_customers"]
    assert [q.name for q in queries.values()] == ["dbo_orders-v1", "dbo_order_items-v1", "dbo_customers-v1"]
    # Tables in the catalog, under the warehouse; nothing in the working directory.
    assert not list(Path.cwd().glob("bronze.*")) and not list(Path.cwd().glob("ops.*"))
    assert {r["tableName"] for r in spark.sql("SHOW TABLES IN bronze").collect() if not r["isTemporary"]} == set(TABLES)
    control = "ops.table_finalization"
    for ci, query in queries.items():
        assert_bronze_equals_change_table(shop, ci, bronze_of(spark, ci))
        # One facts row per batch, counting what bronze holds.
        rows = facts_rows(spark, "ops.ingestion_facts", f"bronze.{ci}")
        assert sum(r["rows"] for r in rows) == spark.table(f"bronze.{ci}").count()
        assert {r["app_id"] for r in rows} == {f"{ci}-v1"}
        # The verdict: the last batch's end commit time, truncated to the hour.
        end = finalization.end_offset_from_progress(query.lastProgress)
        assert rows[-1]["end_lsn"] == end["lsn"]
        verdict = verdicts(spark, control)[f"bronze.{ci}"]
        assert verdict["finalized_until"] == finalization.candidate(end) is not None
        assert verdict["end_lsn"] == end["lsn"]
        assert finalization.finalized_until(spark, control, f"bronze.{ci}") == verdict["finalized_until"]
        assert finalization.is_final(spark, control, f"bronze.{ci}", verdict["finalized_until"])
        assert not finalization.is_final(spark, control, f"bronze.{ci}",
                                         verdict["finalized_until"] + timedelta(milliseconds=1))

    # The next run picks up only what is new, and moves the verdict on.
    cli("sim", "clock", "--db", shop, "--advance", 7200)
    workload(cli, shop, 60, seed=6)
    queries = start_many(spark, options, TABLES, target="bronze.{ci}", app_id="{ci}-v1",
                         checkpoint="/Volumes/main/ops/checkpoints/{ci}", facts_table="ops.ingestion_facts",
                         trigger={"availableNow": True})
    assert await_all(queries) == {}
    for ci, query in queries.items():
        before = verdicts(spark, control)[f"bronze.{ci}"]["finalized_until"]
        end = finalization.end_offset_from_progress(query.lastProgress)
        after = finalization.advance(spark, control, f"bronze.{ci}", end)
        assert after == finalization.candidate(end) and after > before
        assert_bronze_equals_change_table(shop, ci, bronze_of(spark, ci))
    assert len(spark.table(control).collect()) == 3


def test_options_per_table(spark, shop, cli, guide_tables):
    from mssql_cdc import start_many, stop_all

    options = sim_options(shop)
    ########## the guide's example
    queries = start_many(
        spark,
        options,
        {
            "dbo_orders": {"numPartitions": "8", "maxCommitsPerBatch": "500"},
            "dbo_order_items": {"numPartitions": "8"},
            "dbo_customers": {"numPartitions": "1"},
        },
        target="bronze.{ci}",
        app_id="{ci}-v1",
        checkpoint="/Volumes/main/ops/checkpoints/{ci}",
        facts_table="ops.ingestion_facts",
    )
    ##########
    try:
        expected = _change_rows(cli, shop)
        for ci in TABLES:
            wait_for(lambda: spark.catalog.tableExists(f"bronze.{ci}")
                     and delta(bronze_of(spark, ci)).num_rows == expected[ci], what=f"{ci} to catch up")
        assert all(q.isActive for q in queries.values())
    finally:
        stop_all(queries)
    for ci in TABLES:
        assert_bronze_equals_change_table(shop, ci, bronze_of(spark, ci))


@pytest.mark.connect
def test_keep_them_running_with_trackers(spark, shop, guide_tables):
    options = sim_options(shop)
    ########## the guide's example, with a timeout of seconds instead of four hours (and, marked
    ########## below, a wait for every table's first batch, so that a slow machine stops none mid-batch)
    from mssql_cdc import await_all, finalization, start_many, stop_all

    tables = ["dbo_orders", "dbo_order_items", "dbo_customers"]
    common = {
        "target": "bronze.{ci}",
        "app_id": "{ci}-v1",
        "checkpoint": "/Volumes/main/ops/checkpoints/{ci}",
        "facts_table": "ops.ingestion_facts",
        "trigger": {"processingTime": "1 minute"},
    }
    queries = start_many(spark, options, tables, **common)
    trackers = [
        finalization.track(spark, q, "ops.table_finalization", f"bronze.{ci}")
        for ci, q in queries.items()
    ]
    for q in queries.values():  # (the test's wait)
        wait_for(lambda: q.lastProgress is not None or not q.isActive, timeout=120, what="a first batch")
    failed = await_all(queries, timeout=2)  # every table runs for two more seconds
    stop_all(queries)
    for tracker in trackers:
        tracker.join()  # each table's last verdict is written, or its failure logged
    if failed:
        raise RuntimeError(f"CDC streams failed: {sorted(failed)}")
    ##########

    control = verdicts(spark, "ops.table_finalization")
    for (ci, query), tracker in zip(queries.items(), trackers):
        assert not query.isActive and tracker.join(timeout=0)
        assert tracker.last_error is None and tracker.failures == 0
        end = finalization.end_offset_from_progress(query.lastProgress)
        assert control[f"bronze.{ci}"]["finalized_until"] == finalization.candidate(end) is not None
        assert_bronze_equals_change_table(shop, ci, bronze_of(spark, ci))


def test_groups_with_available_now(spark, shop, guide_tables):
    options = sim_options(shop)
    tables = ["dbo_orders", "dbo_order_items", "dbo_customers"]
    from mssql_cdc import await_all, start_many

    ########## the guide's example
    ids = {
        "target": "bronze.{ci}",
        "app_id": "{ci}-v1",
        "checkpoint": "/Volumes/main/ops/checkpoints/{ci}",
        "facts_table": "ops.ingestion_facts",
    }
    failed = {}
    for i in range(0, len(tables), 10):  # 10 streams at a time
        group = start_many(spark, options, tables[i : i + 10], trigger={"availableNow": True}, **ids)
        failed |= await_all(group)
        # advance the verdict of each table in the group, as in the first example
    ##########

    assert failed == {}
    assert not any(q.isActive for q in group.values())
    for ci in tables:
        assert_bronze_equals_change_table(shop, ci, bronze_of(spark, ci))


@pytest.mark.parametrize("param", ["target", "app_id", "checkpoint"])
def test_a_template_without_ci_starts_nothing(spark, shop, tmp_path, param):
    from mssql_cdc import start_many

    kwargs = {"target": f"{tmp_path}/bronze/{{ci}}", "app_id": "{ci}-v1",
              "checkpoint": f"{tmp_path}/checkpoints/{{ci}}"}
    kwargs[param] = kwargs[param].replace("{ci}", "all")
    with pytest.raises(ValueError, match=param):
        start_many(spark, sim_options(shop), TABLES, facts_table=f"{tmp_path}/facts", **kwargs)
    assert spark.streams.active == []
    assert not (tmp_path / "facts").exists() and not (tmp_path / "checkpoints").exists()


def test_options_and_flags_are_keyword_only(spark, shop, tmp_path):
    from mssql_cdc import await_all, start_many

    with pytest.raises(TypeError):
        start_many(spark, sim_options(shop), TABLES, f"{tmp_path}/{{ci}}", "{ci}", f"{tmp_path}/c/{{ci}}")
    with pytest.raises(TypeError):
        await_all({}, 5)
    assert spark.streams.active == [] and not (tmp_path / "c").exists()


def test_a_bad_table_option_starts_nothing(spark, shop, tmp_path):
    from mssql_cdc import ConfigError, start_many

    tables = {"dbo_customers": {}, "dbo_orders": {"MAXCOMMITSPERBATCH": "0"}, "dbo_order_items": {}}
    with pytest.raises(ValueError, match="maxCommitsPerBatch") as raised:
        start_many(spark, sim_options(shop), tables, target=f"{tmp_path}/bronze/{{ci}}", app_id="{ci}-v1",
                   checkpoint=f"{tmp_path}/checkpoints/{{ci}}", facts_table=f"{tmp_path}/facts",
                   trigger={"processingTime": "1 minute"})
    assert isinstance(raised.value, ConfigError)
    assert spark.streams.active == []
    # Every stream is checked before any is made ready: no table and no checkpoint was made.
    assert not any((tmp_path / made).exists() for made in ("bronze", "checkpoints", "facts"))


def test_a_failing_start_stops_the_queries_already_started(spark, shop, tmp_path):
    from pyspark.errors import IllegalArgumentException

    from mssql_cdc import start_many

    # One query name for every stream: Spark refuses to start the second while the first runs.
    with pytest.raises(IllegalArgumentException, match="same-name"):
        start_many(spark, sim_options(shop), TABLES, target=f"{tmp_path}/bronze/{{ci}}", app_id="{ci}-v1",
                   checkpoint=f"{tmp_path}/checkpoints/{{ci}}", trigger={"processingTime": "1 minute"},
                   query_name="same-name")
    assert spark.streams.active == []
    assert (tmp_path / "checkpoints" / TABLES[0]).exists()  # it had started
    assert not (tmp_path / "checkpoints" / TABLES[2]).exists()


@pytest.mark.connect
def test_a_failing_table_fails_alone_and_the_others_restart_from_their_checkpoints(spark, shop, cli, tmp_path):
    from mssql_cdc import await_all, is_data_loss, start_many, stop_all

    lake = tmp_path / "lake"
    options = sim_options(shop)
    common = {
        "target": f"{lake}/bronze/{{ci}}",
        "app_id": "{ci}-v1",
        "checkpoint": f"{lake}/checkpoints/{{ci}}",
        "facts_table": f"{lake}/ops/ingestion_facts",
        "trigger": {"processingTime": "500 milliseconds"},
    }
    queries = start_many(spark, options, TABLES, **common)
    try:
        for ci in TABLES:
            wait_for(lambda: queries[ci].lastProgress is not None, what=f"{ci}'s first batch")
        cli("sim", "disable-cdc", "--db", shop, "--capture-instance", "dbo_orders")
        workload(cli, shop, 40, seed=9, tables=["dbo.customers", "dbo.order_items", "dbo.orders"])
        wait_for(lambda: not queries["dbo_orders"].isActive, what="dbo_orders to fail")
        for ci in ("dbo_customers", "dbo_order_items"):
            wait_for(lambda: delta(f"{lake}/bronze/{ci}").num_rows == _change_rows(cli, shop)[ci],
                     what=f"{ci} to catch up")
        failed = await_all(queries, timeout=1)
        assert list(failed) == ["dbo_orders"]
        assert "dbo_orders" in str(failed["dbo_orders"]) and not is_data_loss(failed["dbo_orders"])
        assert queries["dbo_customers"].isActive and queries["dbo_order_items"].isActive
    finally:
        stop_all(queries)

    # The stopped tables restart in the same session with the same arguments, from their
    # checkpoints (dbo_orders needs a decision first: its capture instance is gone).
    workload(cli, shop, 40, seed=10, tables=["dbo.customers", "dbo.order_items"])
    stopped = [ci for ci, q in queries.items() if not q.isActive and ci != "dbo_orders"]
    queries.update(start_many(spark, options, stopped, **common))
    try:
        for ci in stopped:
            wait_for(lambda: delta(f"{lake}/bronze/{ci}").num_rows == _change_rows(cli, shop)[ci],
                     what=f"{ci} to catch up after the restart")
    finally:
        stop_all(queries)
    for ci in stopped:
        assert_bronze_equals_change_table(shop, ci, f"{lake}/bronze/{ci}")


def _change_rows(cli, db):
    from spark_helpers import info

    return {ci["name"]: ci["change_rows"] for ci in info(cli, db)["capture_instances"]}


def test_await_all_with_a_timeout_shorter_than_a_millisecond_raises_nothing(spark, shop, tmp_path):
    from mssql_cdc import await_all, start_many, stop_all

    queries = start_many(spark, sim_options(shop), ["dbo_customers"], target=f"{tmp_path}/bronze/{{ci}}",
                         app_id="{ci}-v1", checkpoint=f"{tmp_path}/checkpoints/{{ci}}",
                         trigger={"processingTime": "1 second"})
    try:
        for timeout in (0, 0.0004, 0.0011):
            assert await_all(queries, timeout=timeout) == {}
    finally:
        stop_all(queries)
