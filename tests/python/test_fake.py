"""mssql_cdc.fake: a test's CDC database kept by the simulated SQL Server, driven as 0.8.0's
fake is (commits of change rows at given times, idle entries, cleanup, a second capture
instance, DDL), and read back through FakeCdcClient and make_client's backend fake."""

import datetime as dt

import pyarrow as pa
import pytest

import mssql_cdc
from mssql_cdc.client import make_client
from mssql_cdc.fake import FakeCdcClient, FakeCdcDatabase

T0 = dt.datetime(2026, 1, 1, 12, 0, 0)
ORDERS = "order_id INT, status STRING, amount DECIMAL(18,2)"


@pytest.fixture
def fake(tmp_path):
    path = str(tmp_path / "src")
    db = FakeCdcDatabase(path, ["dbo_orders", "dbo_items"], keys={"dbo_orders": "order_id", "dbo_items": ["order_id", "line"]},
                         columns={"dbo_orders": ORDERS, "dbo_items": "order_id INT, line INT, qty BIGINT"})
    return path, db


def changes(client, ci, columns):
    batches = list(client.iter_changes(ci, client.min_lsn(ci), client.max_lsn(), columns, False, 100))
    return pa.Table.from_batches(batches).to_pylist() if batches else []


def test_commits_become_the_change_rows_given_at_the_times_given(fake):
    path, db = fake
    first = db.commit("dbo_orders", [(2, {"order_id": 1, "status": "new", "amount": "9.50"}),
                                     (2, {"order_id": 2, "status": "new"})], at=T0)
    second = db.commit("dbo_orders", [(3, {"order_id": 1, "status": "new", "amount": "9.50"}),
                                      (4, {"order_id": 1, "status": "paid", "amount": "9.50"})],
                       at=T0 + dt.timedelta(minutes=1))
    third = db.commit("dbo_orders", [(1, {"order_id": 2, "status": "new"})], at=T0 + dt.timedelta(minutes=2))
    assert first < second < third
    client = FakeCdcClient(path)
    rows = changes(client, "dbo_orders", ["order_id", "status"])
    assert [(r["_operation"], r["order_id"], r["status"]) for r in rows] == [
        (2, 1, "new"), (2, 2, "new"), (3, 1, "new"), (4, 1, "paid"), (1, 2, "new")]
    assert [r["_start_lsn"] for r in rows] == [first, first, second, second, third]
    assert rows[2]["_seqval"] == rows[3]["_seqval"]  # an update's two images share one seqval
    assert [r["_commit_ts"] for r in rows] == [T0, T0, T0 + dt.timedelta(minutes=1), T0 + dt.timedelta(minutes=1),
                                               T0 + dt.timedelta(minutes=2)]
    assert client.lsn_to_time(second) == "2026-01-01T12:01:00.000"
    assert client.time_to_lsn(T0 + dt.timedelta(seconds=90)) == second
    assert client.source_table("dbo_orders") == ("dbo", "dbo_orders", ["order_id"], client.min_lsn("dbo_orders"))
    assert client.captured_columns("dbo_orders") == "`order_id` INT, `status` STRING, `amount` DECIMAL(18,2)"
    # The table follows the changes: order 1 paid, order 2 gone.
    table = pa.Table.from_batches(list(client.iter_table("dbo", "dbo_orders", ["order_id", "status"], ["order_id"],
                                                         None, None, None, 10))).to_pylist()
    assert table == [{"order_id": 1, "status": "paid"}]


def test_changes_the_table_never_saw_are_logged_as_given(fake):
    path, db = fake
    db.commit("dbo_items", [(1, {"order_id": 7, "line": 1, "qty": 3})], at=T0)        # a delete of nothing
    db.commit("dbo_items", [(4, {"order_id": 8, "line": 1, "qty": 5})], at=T0)        # an update of nothing
    db.commit("dbo_items", [(2, {"order_id": 8, "line": 1, "qty": 6})], at=T0)        # an insert of a key there
    client = FakeCdcClient(path)
    rows = changes(client, "dbo_items", ["order_id", "qty"])
    assert [(r["_operation"], r["order_id"], r["qty"]) for r in rows] == [(1, 7, 3), (3, 8, 5), (4, 8, 5), (2, 8, 6)]
    assert client.key_max("dbo", "dbo_items", ["order_id", "line"]) == (8, 1)


def test_idle_entries_cleanup_and_a_second_capture_instance(fake):
    path, db = fake
    first = db.commit("dbo_orders", [(2, {"order_id": 1, "status": "new"})], at=T0)
    idle = db.idle(at=T0 + dt.timedelta(minutes=5))
    client = make_client({"backend": "fake", "fakePath": path})
    assert client.max_lsn() == idle and changes(client, "dbo_orders", ["order_id"])[-1]["_start_lsn"] == first
    assert client.lsn_to_time(idle) == "2026-01-01T12:05:00.000"
    db.cleanup("dbo_orders", idle)
    assert client.min_lsn("dbo_orders") == idle and changes(client, "dbo_orders", ["order_id"]) == []
    assert client.min_lsn("dbo_items") < idle  # the other instance keeps what it had

    name = db.add_capture_instance("dbo_orders", ORDERS + ", note STRING", at=T0 + dt.timedelta(minutes=6))
    assert name == "dbo_orders_v2"
    later = db.commit("dbo_orders", [(2, {"order_id": 3, "status": "new", "note": "gift"})],
                      at=T0 + dt.timedelta(minutes=7))
    assert [ci.name for ci in client.capture_instances("dbo_orders")] == ["dbo_orders", "dbo_orders_v2"]
    assert changes(client, "dbo_orders_v2", ["order_id", "note"])[-1] == {
        "_start_lsn": later, "_seqval": changes(client, "dbo_orders_v2", ["order_id"])[-1]["_seqval"],
        "_operation": 2, "_commit_ts": T0 + dt.timedelta(minutes=7), "order_id": 3, "note": "gift"}
    with pytest.raises(mssql_cdc.ConfigError, match="note"):
        list(client.iter_changes("dbo_orders", client.min_lsn("dbo_orders"), later, ["note"], False, 10))
    db.drop_capture_instance("dbo_orders")
    assert [ci.name for ci in client.capture_instances("dbo_orders_v2")] == ["dbo_orders_v2"]


def test_ddl_is_in_every_instances_history(fake):
    path, db = fake
    db.commit("dbo_orders", [(2, {"order_id": 1, "status": "new"})], at=T0)
    added = db.ddl("dbo_orders", "note", "ALTER TABLE dbo.dbo_orders ADD note NVARCHAR(20)")
    widened = db.ddl("dbo_orders", "amount", "ALTER TABLE dbo.dbo_orders ALTER COLUMN amount DECIMAL(20,2)",
                     "DECIMAL(20,2)")
    client = FakeCdcClient(path)
    history = client.ddl_history("dbo_orders", "0x0", client.max_lsn())
    assert [h.lsn for h in history] == [added, widened]
    assert "note" in history[0].command and "decimal(20,2)" in history[1].command.lower().replace(" ", "")
    assert client.present_columns("dbo_orders", ["order_id", "note", "gone"]) == ["order_id", "note"]
    dropped = db.ddl("dbo_orders", "note", "ALTER TABLE dbo.dbo_orders DROP COLUMN note")
    assert client.ddl_history("dbo_orders", widened, client.max_lsn())[-1].lsn == dropped


def test_a_transaction_queued_before_a_read_commits_after_the_stamp_and_before_the_rows(fake):
    path, db = fake
    db.commit("dbo_orders", [(2, {"order_id": 1, "status": "new"})], at=T0)
    db.commit_before_read("dbo_orders", [(2, {"order_id": 2, "status": "raced"})], at=T0 + dt.timedelta(minutes=1))
    client = FakeCdcClient(path)
    stamp = client.max_lsn()
    rows = pa.Table.from_batches(list(client.iter_table("dbo", "dbo_orders", ["order_id", "status"], ["order_id"],
                                                        None, None, None, 10))).to_pylist()
    assert rows == [{"order_id": 1, "status": "new"}, {"order_id": 2, "status": "raced"}]
    assert client.max_lsn() > stamp
    assert client.lsn_to_time(client.max_lsn()) == "2026-01-01T12:01:00.000"
    again = pa.Table.from_batches(list(client.iter_table("dbo", "dbo_orders", ["order_id"], ["order_id"],
                                                         None, None, None, 10)))
    assert again.num_rows == 2  # committed once


def test_reopening_keeps_what_was_committed(fake):
    path, db = fake
    lsn = db.commit("dbo_orders", [(2, {"order_id": 1})], at=T0)
    again = FakeCdcDatabase(path, ["dbo_orders", "dbo_more"], keys={"dbo_orders": "order_id", "dbo_more": "k"},
                            columns={"dbo_orders": ORDERS, "dbo_more": "k INT"})
    client = FakeCdcClient(path)
    assert [r["_start_lsn"] for r in changes(client, "dbo_orders", ["order_id"])] == [lsn]
    enabled = client.max_lsn()  # enabling CDC on dbo.dbo_more is in the log, as SQL Server's is
    assert again.commit("dbo_more", [(2, {"k": 1})], at=T0 + dt.timedelta(seconds=1)) > enabled > lsn


def test_bad_input_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "src"
    with pytest.raises(mssql_cdc.ConfigError, match="needs its columns"):
        FakeCdcDatabase(str(path), ["dbo_orders"], keys={"dbo_orders": "id"})
    with pytest.raises(mssql_cdc.ConfigError, match="needs its key"):
        FakeCdcDatabase(str(path), ["dbo_orders"], columns={"dbo_orders": "id INT"})
    with pytest.raises(mssql_cdc.ConfigError, match="unknown type|type"):
        FakeCdcDatabase(str(path), ["dbo_orders"], keys={"dbo_orders": "id"}, columns={"dbo_orders": "id WIDGET"})
    assert not path.exists()
    db = FakeCdcDatabase(str(path), ["dbo_orders"], keys={"dbo_orders": "id"}, columns={"dbo_orders": "id INT, v INT"})
    before = FakeCdcClient(str(path)).max_lsn()
    with pytest.raises(mssql_cdc.ConfigError, match="after image"):
        db.commit("dbo_orders", [(3, {"id": 1, "v": 1})], at=T0)
    with pytest.raises(mssql_cdc.ConfigError, match="operation 5"):
        db.commit("dbo_orders", [(5, {"id": 1})], at=T0)
    with pytest.raises(mssql_cdc.ConfigError, match="no column zzz"):
        db.commit("dbo_orders", [(2, {"id": 1, "zzz": 1})], at=T0)
    assert FakeCdcClient(str(path)).max_lsn() == before
    with pytest.raises(mssql_cdc.ConfigError, match="fakePath is required"):
        make_client({"backend": "fake"})
