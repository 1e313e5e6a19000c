"""Lab check t9 (spec 5.1) on Spark through `sim serve`: dbo.orders moves to a new capture
instance with a new column while a writer keeps changing it, read by a least-privilege login.
The running query stops at the new instance's start S, the restart goes on; every change is in
bronze once, the older instance's below S and the newer's from S; the latest image per key is
the table (in the columns of the instance that captured it); one switch event; the stream keeps running after the old instance is dropped."""

import threading

from spark_helpers import change_table, delta, row_key, served_sim, sim_options, wait_for, workload

from mssql_cdc import _core, await_all, is_schema_changed, register, stream

OLD, NEW = "dbo_orders", "dbo_orders_v2"
LOGIN = "t9_reader"


class Writer:
    """Small transactions on dbo.orders, a few every 0.3 s, until stopped: slower than the
    stream reads, so that the stream catches up while it writes."""

    def __init__(self, cli, db):
        self._cli, self._db = cli, db
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.calls = 0

    def _run(self):
        while not self._stop.wait(0.3):
            workload(self._cli, self._db, 3, seed=1000 + self.calls, tables=["dbo.orders"])
            self.calls += 1

    def __enter__(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=60)

    def __exit__(self, *exc):
        self.stop()


def expected_changes(db, older=None):
    """Every change of the table once: the older instance's below S (`older`, kept from before
    the older instance was dropped, or read now), the newer's from S."""
    s = _core.open_sim_source(str(db)).min_lsn(NEW)
    if older is None:
        older = [r for r in change_table(db, OLD).to_pylist() if r["_start_lsn"] < s]
    return s, older + change_table(db, NEW).to_pylist()


def bronze_keys(tmp_path):
    try:
        return sorted(row_key(r) for r in delta(f"{tmp_path}/bronze").to_pylist())
    except Exception:  # noqa: BLE001 (not created yet)
        return []


def caught_up(db, tmp_path, older=None):
    return bronze_keys(tmp_path) == sorted(row_key(r) for r in expected_changes(db, older)[1])


def latest_images(rows):
    """The latest image of each key that is not deleted, as a bronze row."""
    latest = {}
    for row in rows:
        if row["_operation"] == 3:
            continue
        order = (row["_start_lsn"], row["_seqval"], row["_operation"])
        if row["order_id"] not in latest or order > latest[row["order_id"]][0]:
            latest[row["order_id"]] = (order, row)
    return {k: r for k, (_, r) in latest.items() if r["_operation"] != 1}


def test_t9_a_switch_under_a_writer_read_by_a_least_privilege_login(spark, shop, cli, tmp_path):
    def start(odbc):
        return stream(spark, dict(odbc, captureInstance=OLD, maxCommitsPerBatch="200")).to_delta(
            f"{tmp_path}/bronze", "orders-t9", f"{tmp_path}/ckpt", f"{tmp_path}/facts")

    with served_sim(cli, shop, user=LOGIN, grants=["dbo.orders", f"cdc.{OLD}_CT"]) as odbc:
        with Writer(cli, shop) as writer:
            query = start(odbc)
            wait_for(lambda: bronze_keys(tmp_path), what="the first batch")
            cli("sim", "add-column", "--db", shop, "--table", "dbo.orders", "--column", "note varchar(20)")
            cli("sim", "enable-cdc", "--db", shop, "--table", "dbo.orders", "--capture-instance", NEW)
            cli("sim", "grant", "--db", shop, "--login", LOGIN, "--object", f"cdc.{NEW}_CT")
            error = await_all({OLD: query}, timeout=240).get(OLD)
            assert not query.isActive, "the query did not stop at the new instance's start"
            assert error is not None and is_schema_changed(error), error
            assert f"The stream reaches capture instance '{NEW}'" in str(error)

            query = start(odbc)
            s = _core.open_sim_source(str(shop)).min_lsn(NEW)
            wait_for(lambda: any(k[0] >= s for k in bronze_keys(tmp_path)), timeout=240,
                     what="changes from the new instance")
            writer.stop()
            assert writer.calls > 0
        wait_for(lambda: caught_up(shop, tmp_path), timeout=240, what="bronze to hold every change")

        # The old instance may go now; the query goes on with the new one.
        s, expected = expected_changes(shop)
        older = [r for r in expected if r["_start_lsn"] < s]
        cli("sim", "disable-cdc", "--db", shop, "--capture-instance", OLD)
        workload(cli, shop, 5, seed=99, tables=["dbo.orders"])
        wait_for(lambda: caught_up(shop, tmp_path, older), timeout=240, what="the changes after the drop")
        assert query.isActive and query.exception() is None
        query.stop()

    s, expected = expected_changes(shop, older)
    bronze = delta(f"{tmp_path}/bronze").to_pylist()
    keys = [row_key(r) for r in bronze]
    assert len(keys) == len(set(keys)), "bronze holds a change twice"
    assert sorted(keys) == sorted(row_key(r) for r in expected)
    assert all(r["_capture_instance"] == (NEW if r["_start_lsn"] >= s else OLD) for r in bronze)
    switched = [r for r in delta(f"{tmp_path}/facts").to_pylist() if r["event"] == "capture_instance_switched"]
    assert [(r["min_lsn"], r["detail"]) for r in switched] == [(s, f"{OLD} -> {NEW}")]

    # The latest image per key is the table, read now through the snapshot source.
    register(spark)
    table = (spark.read.format("mssql_cdc_snapshot").options(**sim_options(shop))
             .option("captureInstance", NEW).load())
    columns = [c for c in table.columns if not c.startswith("_")]
    now = {r["order_id"]: r for r in (row.asDict() for row in table.collect())}
    latest = latest_images(bronze)
    assert set(latest) == set(now)
    for key, row in latest.items():
        # A change the older instance captured has no note: the writer may set one between
        # the ALTER TABLE and the new instance's start, and only the new instance captures it.
        captured = columns if row["_capture_instance"] == NEW else [c for c in columns if c != "note"]
        assert tuple(row[c] for c in captured) == tuple(now[key][c] for c in captured), key
