"""mssql_cdc.fake on Spark, as a pipeline's own tests written for mssql-cdc-pyspark 0.8.0 use
it: a FakeCdcDatabase driven change by change (commits at given times, an idle entry,
cleanup), read with backend fake by start_many into bronze, verdicts advanced from the idle
entry's time, and retention purging unread changes failing one table alone."""

from datetime import datetime, timedelta

from spark_helpers import delta

T0 = datetime(2026, 1, 1, 12, 0)


def test_a_fake_database_fans_out_and_finalizes_as_sql_server_would(spark, tmp_path):
    from mssql_cdc import await_all, finalization, is_data_loss, start_many
    from mssql_cdc.fake import FakeCdcDatabase

    src = str(tmp_path / "src")
    db = FakeCdcDatabase(src, ["dbo_orders", "dbo_customers"],
                         keys={"dbo_orders": "order_id", "dbo_customers": "customer_id"},
                         columns={"dbo_orders": "order_id INT, status STRING",
                                  "dbo_customers": "customer_id INT, name STRING"})
    for i in range(6):
        db.commit("dbo_orders", [(2, {"order_id": i, "status": "new"})], at=T0 + timedelta(minutes=i))
    db.commit("dbo_customers", [(2, {"customer_id": 1, "name": "Ada"})], at=T0 + timedelta(minutes=1))
    db.commit("dbo_orders", [(3, {"order_id": 0, "status": "new"}), (4, {"order_id": 0, "status": "paid"})],
              at=T0 + timedelta(minutes=10))
    db.idle(at=T0 + timedelta(hours=2, minutes=1))

    def run():
        queries = start_many(spark, {"backend": "fake", "fakePath": src}, ["dbo_orders", "dbo_customers"],
                             target=str(tmp_path / "bronze" / "{ci}"), app_id="{ci}-v1",
                             checkpoint=str(tmp_path / "checkpoints" / "{ci}"), facts_table=str(tmp_path / "facts"),
                             trigger={"availableNow": True})
        return queries, await_all(queries)

    queries, failed = run()
    assert failed == {}
    control = str(tmp_path / "control")
    for ci, query in queries.items():
        end = finalization.end_offset_from_progress(query.lastProgress)
        # Every period up to the idle entry's hour is complete, on both tables.
        assert finalization.advance(spark, control, ci, end) == datetime(2026, 1, 1, 14, 0)
    orders = delta(str(tmp_path / "bronze" / "dbo_orders")).sort_by([("_start_lsn", "ascending"),
                                                                     ("_seqval", "ascending"),
                                                                     ("_operation", "ascending")]).to_pylist()
    assert [(r["_operation"], r["order_id"], r["status"]) for r in orders] == (
        [(2, i, "new") for i in range(6)] + [(3, 0, "new"), (4, 0, "paid")])
    assert orders[0]["_commit_ts"] == T0 and orders[-1]["_commit_ts"] == T0 + timedelta(minutes=10)
    assert delta(str(tmp_path / "bronze" / "dbo_customers")).num_rows == 1

    # Cleanup purges a change the orders stream has not read: that table fails alone.
    db.commit("dbo_orders", [(2, {"order_id": 9, "status": "new"})], at=T0 + timedelta(hours=3))
    db.commit("dbo_customers", [(2, {"customer_id": 2, "name": "Grace"})], at=T0 + timedelta(hours=3))
    db.cleanup("dbo_orders", db.idle(at=T0 + timedelta(hours=4)))
    _, failed = run()
    assert list(failed) == ["dbo_orders"] and is_data_loss(failed["dbo_orders"])
    assert delta(str(tmp_path / "bronze" / "dbo_customers")).num_rows == 2
