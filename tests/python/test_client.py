"""mssql_cdc.client: make_client's CdcClient answers from the engine's reader what the
simulated database holds (read directly, and served over TDS through ODBC Driver 18), and
the two backends run a caller's own T-SQL through their driver packages."""

import datetime as dt
import json
import subprocess
from decimal import Decimal

import pytest
from sim_serving import BINARY, serving

import mssql_cdc
from mssql_cdc import client as cdc_client
from mssql_cdc.client import CdcClient, make_client



@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """dbo.orders etc. on a Pacific-time clock, 40 transactions, then a column added to
    dbo.customers (a DDL history entry)."""
    db = tmp_path_factory.mktemp("client") / "shop.sim"

    def cli(*args):
        done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-03-01 10:00:00",
        "--time-zone", "Pacific Standard Time")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 1, "--transactions", 200, "--seed", 5)
    cli("sim", "add-column", "--db", db, "--table", "dbo.customers", "--column", "tier int")
    return db, json.loads(cli("sim", "info", "--db", db, "--json")), cli


@pytest.fixture(scope="module")
def sim_client(shop):
    client = make_client({"backend": "sim", "simPath": str(shop[0])})
    yield client
    client.close()


def read_all(batches):
    import pyarrow as pa
    batches = list(batches)
    return pa.Table.from_batches(batches) if batches else None


def test_is_a_cdc_client_with_the_lsns_the_database_holds(shop, sim_client):
    _, info, _ = shop
    assert isinstance(sim_client, CdcClient)
    assert sim_client.max_lsn() == info["max_lsn"]
    orders = next(ci for ci in info["capture_instances"] if ci["name"] == "dbo_orders")
    assert sim_client.min_lsn("dbo_orders") == orders["start_lsn"]
    assert sim_client.min_lsn("dbo_nope") == "0x" + "0" * 20  # as sys.fn_cdc_get_min_lsn answers
    lsn = sim_client.max_lsn()
    assert sim_client.decrement_lsn(sim_client.increment_lsn(lsn)) == lsn
    assert sim_client.nth_commit_after(lsn, 1) is None


def test_commit_times_are_utc_both_ways(sim_client):
    lsn = sim_client.max_lsn()
    utc = sim_client.lsn_to_time(lsn)
    # The server clock reads Pacific Standard Time (UTC-8) in March before the change to PDT.
    assert utc.startswith("2026-03-01T18:")
    at = dt.datetime.fromisoformat(utc)
    assert sim_client.time_to_lsn(at) == lsn
    assert sim_client.time_to_lsn(at.replace(tzinfo=dt.timezone.utc)) == lsn
    assert sim_client.time_to_lsn(dt.datetime(2000, 1, 1)) is None
    assert sim_client.lsn_to_time(sim_client.increment_lsn(lsn)) is None
    assert sim_client.clock() == ("Pacific Standard Time", -480)


def test_capture_instances_columns_and_ddl_history(sim_client):
    table = sim_client.source_table("DBO_ORDERS")  # names match ignoring case, as SQL Server's do
    assert (table.schema, table.table, table.keys) == ("dbo", "orders", ["order_id"])
    [orders] = sim_client.capture_instances("dbo_orders")
    assert orders.name == "dbo_orders" and orders.columns[0] == "order_id"
    assert orders.column_types[0] == "bigint"
    assert sim_client.captured_columns("dbo_orders").startswith("`order_id` BIGINT, ")
    assert sim_client.key_types("dbo_orders", ["order_id", "nope"]) == ["bigint", None]
    [ddl] = sim_client.ddl_history("dbo_customers", "0x0", sim_client.max_lsn())
    assert "tier" in ddl.command and ddl.commit_ts.startswith("2026-03-01T")
    assert sim_client.ddl_history("dbo_customers", sim_client.increment_lsn(ddl.lsn), sim_client.max_lsn()) == []
    assert sim_client.present_columns("dbo_customers", ["customer_id", "gone", "TIER"]) == ["customer_id", "TIER"]
    sim_client.forget_columns()
    with pytest.raises(mssql_cdc.NotFoundError, match="dbo_orders"):
        sim_client.source_table("dbo_nope")


def test_change_rows_and_split_points_cover_the_change_table(shop, sim_client):
    _, info, _ = shop
    orders = next(ci for ci in info["capture_instances"] if ci["name"] == "dbo_orders")
    lo, hi = sim_client.min_lsn("dbo_orders"), sim_client.max_lsn()
    table = read_all(sim_client.iter_changes("dbo_orders", lo, hi, ["order_id", "status"], False, 7))
    assert table.num_rows == orders["change_rows"]
    assert table.schema.names == ["_start_lsn", "_seqval", "_operation", "_commit_ts", "order_id", "status"]
    points = sim_client.split_points("dbo_orders", lo, hi, 4)
    assert sum(rows for _, _, rows in points) == orders["change_rows"]
    assert all(nxt == sim_client.increment_lsn(bound) for bound, nxt, _ in points)
    assert points[-1][0] <= hi


def test_keys_and_rows_of_the_source_table(shop, sim_client):
    keys = sorted(read_all(sim_client.iter_table("dbo", "orders", ["order_id"], ["order_id"], None, None, None,
                                                 5)).column("order_id").to_pylist())
    assert sim_client.row_estimate("dbo", "orders") == len(keys)
    assert sim_client.key_max("dbo", "orders", ["order_id"]) == (keys[-1],)
    assert sim_client.key_range("dbo", "orders", "order_id") == (keys[0], keys[-1])
    assert sim_client.key_range("dbo", "orders", "order_id", keys[2], keys[5]) == (keys[2], keys[4])
    assert sim_client.key_range("dbo", "orders", "order_id", keys[-1] + 1) == (None, None)
    assert sim_client.key_bound("dbo", "orders", ["order_id"], None, (keys[1],), None, 3) == (keys[4],)
    assert sim_client.key_bound("dbo", "orders", ["order_id"], None, (keys[1],), (keys[3],), 3) is None
    n = 3
    sizes = [len(keys) // n + (1 if i < len(keys) % n else 0) for i in range(n)]
    assert sim_client.key_tiles("dbo", "orders", ["order_id"], n) == [(keys[sizes[0]],), (keys[sizes[0] + sizes[1]],)]
    buckets = sim_client.key_buckets("dbo", "orders", "order_id", "int", 4)
    expected = {}
    for k in keys:
        rows, total = expected.get(k // 4, (0, 0))
        expected[k // 4] = (rows + 1, total + k)
    assert buckets == [(b, r, Decimal(t)) for b, (r, t) in sorted(expected.items())]
    inside = [k for k in keys if keys[1] <= k < keys[6]]
    clipped = sim_client.key_buckets("dbo", "orders", "order_id", "int", 4, keys[1], keys[6])
    assert sum(r for _, r, _ in clipped) == len(inside) and sum(s for _, _, s in clipped) == sum(inside)
    assert sim_client.key_buckets("dbo", "orders", None, None, 4) == [(0, len(keys), None)]
    some = read_all(sim_client.iter_table("dbo", "orders", ["order_id", "status"], ["order_id"], None, (keys[1],),
                                          (keys[3],), 100))
    assert some.column("order_id").to_pylist() == keys[1:3] and some.schema.names == ["order_id", "status"]
    with pytest.raises(mssql_cdc.ConfigError, match="isolationLevel"):
        sim_client.key_range("dbo", "orders", "order_id", isolation="snapshot")


def test_chunk_plans_tile_the_keys(sim_client):
    table = sim_client.source_table("dbo_orders")
    extent = cdc_client.snapshot_plan(sim_client, "dbo_orders", table)
    lo, hi = sim_client.key_range("dbo", "orders", "order_id")
    assert extent == {"kind": "int", "lo": lo, "hi": hi, "rows": sim_client.row_estimate("dbo", "orders")}
    chunks = cdc_client.plan_chunks(sim_client, "dbo_orders", table, extent, 4)
    assert chunks[0][0] is None and chunks[-1][1] == hi + 1
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
    assert cdc_client.last_bound(sim_client, "dbo_orders", table, hi) is None
    assert cdc_client.last_bound(sim_client, "dbo_orders", table, lo) == sim_client.key_bound(
        "dbo", "orders", ["order_id"], None, (lo,), None, 1)[0]
    keyset = cdc_client.snapshot_plan(sim_client, "dbo_customers", sim_client.source_table("dbo_customers"),
                                      keys=["customer_id", "name"])
    assert keyset["kind"] == "keyset" and len(keyset["max"]) == 2


def test_bad_options_are_refused_before_anything_opens(tmp_path):
    with pytest.raises(mssql_cdc.ConfigError, match="unknown backend"):
        make_client({"backend": "nope", "connectionString": "Server=x"})
    missing = tmp_path / "missing.sim"
    with pytest.raises(mssql_cdc.SourceError, match="sim create"):
        make_client({"backend": "sim", "simPath": str(missing)})
    assert not missing.exists()
    with pytest.raises(mssql_cdc.ConfigError, match="connectTimeout"):
        make_client({"connectionString": "Server=x", "connectTimeout": "-1"})
    with pytest.raises(mssql_cdc.ConfigError, match="MssqlPythonBackend"):
        cdc_client.SqlCdcClient(object())
    assert "secret" not in repr(cdc_client.MssqlPythonBackend("Server=x;PWD=secret"))


@pytest.fixture(scope="module")
def served(shop):
    """`sim serve` over the shop database: (port, database, user, password)."""
    db, info, cli = shop
    cli("sim", "login", "add", "--db", db, "--name", "client_user", "--password", "Client-pw-1", "--db-owner")
    with serving(db) as port:
        yield port, info["database"], "client_user", "Client-pw-1"


def test_the_engine_answers_over_tds_what_it_reads_from_the_file(served, sim_client):
    port, database, user, password = served
    connection = f"Server=127.0.0.1,{port};Database={database};Encrypt=no"
    backend = cdc_client.MssqlPythonBackend(connection, user=user, password=password)
    client = cdc_client.SqlCdcClient(backend, source_timezone="auto")
    try:
        assert client.max_lsn() == sim_client.max_lsn()
        assert client.clock() == sim_client.clock()
        lo, hi = client.min_lsn("dbo_orders"), client.max_lsn()
        over_tds = read_all(client.iter_changes("dbo_orders", lo, hi, [], True, 1000))
        from_file = read_all(sim_client.iter_changes("dbo_orders", lo, hi, [], True, 1000))
        assert over_tds.equals(from_file)
        assert client.split_points("dbo_orders", lo, hi, 3) == sim_client.split_points("dbo_orders", lo, hi, 3)
        asked = ["customer_id", "gone", "TIER"]
        assert client.present_columns("dbo_customers", asked) == sim_client.present_columns("dbo_customers", asked)
        assert client.key_max("dbo", "orders", ["order_id"]) == sim_client.key_max("dbo", "orders", ["order_id"])
        plan = cdc_client.plan_chunks(client, "dbo_orders", client.source_table("dbo_orders"),
                                      cdc_client.snapshot_plan(client, "dbo_orders", client.source_table("dbo_orders")), 10)
        assert plan == cdc_client.plan_chunks(sim_client, "dbo_orders", sim_client.source_table("dbo_orders"),
                                              cdc_client.snapshot_plan(sim_client, "dbo_orders",
                                                                       sim_client.source_table("dbo_orders")), 10)
        assert len(client.ping(2)) == 2 and all(ms > 0 for ms in client.ping(2))
        assert sim_client.ping() == []  # no server: the file is read directly
    finally:
        client.close()


@pytest.mark.parametrize("backend_class", [cdc_client.MssqlPythonBackend, cdc_client.ArrowOdbcBackend])
def test_backends_run_the_callers_own_sql_through_their_driver(served, sim_client, backend_class):
    port, database, user, password = served
    connection = f"Server=127.0.0.1,{port};Database={database};Encrypt=no"
    if backend_class is cdc_client.ArrowOdbcBackend:  # through unixODBC and FreeTDS, as setup.sh installs them
        connection = f"Driver=FreeTDS;Server=127.0.0.1;Port={port};Database={database};TDS_Version=7.4"
    backend = backend_class(connection, user=user, password=password)
    try:
        assert isinstance(backend, cdc_client.Backend)
        assert backend.scalar("SELECT sys.fn_cdc_get_max_lsn()") in (
            bytes.fromhex(sim_client.max_lsn()[2:]), sim_client.max_lsn())
    finally:
        backend.close()
