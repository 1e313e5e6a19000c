"""mssql-cdc-pyspark 0.8.0 itself, from PyPI in a venv of its own (scripts/setup_reference.sh),
reads a simulated database through `sim serve` as it reads SQL Server: its own client
(backend mssql-python, Microsoft's driver) sends its own statements, and every answer equals
what this package's client reads from the same database file directly."""

import contextlib
import datetime as dt
import json
import os
import subprocess
import textwrap

import pyarrow as pa
import pytest
from sim_serving import BINARY, serving

from mssql_cdc.client import make_client, snapshot_plan


# Answers as JSON values, the same way on both sides.
PLAIN = textwrap.dedent("""
    import datetime as dt
    from decimal import Decimal

    def plain(value):
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, Decimal):
            return str(value)
        if isinstance(value, (dt.datetime, dt.date)):
            return value.isoformat()
        if isinstance(value, bytes):
            return value.hex()
        return value
""")
exec(PLAIN)

# Run by 0.8.0's Python: each call's result as JSON, in order.
REFERENCE_CALLS = PLAIN + textwrap.dedent("""
    import json, sys
    from mssql_cdc.client import make_client, snapshot_plan

    client = make_client(json.loads(sys.argv[1]))
    results = []
    for name, args in json.loads(sys.argv[2]):
        if name in ("iter_changes", "iter_table"):
            rows = [row for batch in getattr(client, name)(*args) for row in batch.to_pylist()]
            results.append(plain(rows))
        elif name == "time_to_lsn":
            results.append(client.time_to_lsn(dt.datetime.fromisoformat(args[0])))
        elif name == "snapshot_plan":
            from mssql_cdc.client import snapshot_plan
            results.append(plain(snapshot_plan(client, args[0], client.source_table(args[0]))))
        else:
            results.append(plain(getattr(client, name)(*args)))
    print(json.dumps(results))
""")


def cli(*args):
    done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@contextlib.contextmanager
def serve_shop(db, start, tps, time_zone=None):
    """The demo shop on a manual clock from `start` (local time; on UTC unless `time_zone`, a
    Windows zone), served over TDS: yields the reference's options."""
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", start,
        *(["--time-zone", time_zone] if time_zone else []))
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", tps, "--transactions", 200, "--seed", 11)
    cli("sim", "login", "add", "--db", db, "--name", "ref_reader", "--password", "Ref-pw-11", "--db-owner")
    database = json.loads(cli("sim", "info", "--db", db, "--json"))["database"]
    with serving(db) as port:
        yield {"backend": "mssql-python", "captureInstance": "dbo_orders",
               "connectionString": f"Server=127.0.0.1,{port};Database={database};UID=ref_reader;"
                                   "PWD=Ref-pw-11;Encrypt=no"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The demo shop on a UTC clock, served over TDS: (database file, reference options)."""
    db = tmp_path_factory.mktemp("reference") / "shop.sim"
    with serve_shop(db, "2026-02-01 08:00:00", 2) as options:
        yield db, options


def reference_answers(python, options, calls):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([python, "-c", REFERENCE_CALLS, json.dumps(options), json.dumps(calls)],
                          capture_output=True, text=True, env=env, cwd="/", timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def test_the_reference_client_reads_through_sim_serve_what_the_file_holds(reference_python, served):
    db, options = served
    ours = make_client({"backend": "sim", "simPath": str(db)})
    max_lsn = ours.max_lsn()
    orders_min, items_min = ours.min_lsn("dbo_orders"), ours.min_lsn("dbo_order_items")
    some_time = ours.lsn_to_time(ours.nth_commit_after(orders_min, 40))
    lo, hi = ours.key_range("dbo", "orders", "order_id")
    calls = [
        ("max_lsn", []), ("min_lsn", ["dbo_orders"]), ("increment_lsn", [orders_min]),
        ("decrement_lsn", [max_lsn]), ("lsn_to_time", [max_lsn]), ("time_to_lsn", [some_time]),
        ("nth_commit_after", [orders_min, 5]), ("split_points", ["dbo_orders", orders_min, max_lsn, 4]),
        ("source_table", ["dbo_order_items"]), ("captured_columns", ["dbo_orders"]),
        ("key_range", ["dbo", "orders", "order_id"]), ("key_range", ["dbo", "orders", "order_id", lo + 3, hi - 3]),
        ("key_max", ["dbo", "order_items", ["order_id", "line_no"]]), ("row_estimate", ["dbo", "orders"]),
        ("key_bound", ["dbo", "orders", ["order_id"], None, None, None, 7]),
        ("key_bound", ["dbo", "order_items", ["order_id", "line_no"], None, None, None, 9]),
        ("key_tiles", ["dbo", "orders", ["order_id"], 3]),
        ("key_buckets", ["dbo", "orders", "order_id", "int", 10]),
        ("key_buckets", ["dbo", "orders", "order_id", "int", 10, lo + 1, hi]),
        ("key_buckets", ["dbo", "orders", None, None, 10]),
        ("iter_changes", ["dbo_orders", orders_min, max_lsn, ["order_id", "status", "total"], True, 50]),
        ("iter_changes", ["dbo_order_items", items_min, max_lsn, ["order_id", "line_no", "quantity"], False, 50]),
        ("iter_table", ["dbo", "orders", ["order_id", "status", "total"], ["order_id"], None, None, None, 20]),
        # The extent a chunked snapshot records when it opens, which the other library plans from.
        ("snapshot_plan", ["dbo_orders"]), ("snapshot_plan", ["dbo_order_items"]),
    ]
    theirs = reference_answers(reference_python, options, calls)

    def ours_answer(name, args):
        if name in ("iter_changes", "iter_table"):
            batches = list(getattr(ours, name)(*args))
            return plain(pa.Table.from_batches(batches).to_pylist() if batches else [])
        if name == "time_to_lsn":
            return ours.time_to_lsn(dt.datetime.fromisoformat(args[0]))
        if name == "snapshot_plan":
            return plain(snapshot_plan(ours, args[0], ours.source_table(args[0])))
        return plain(getattr(ours, name)(*args))

    for (name, args), answer in zip(calls, theirs):
        assert answer == ours_answer(name, args), f"{name}{tuple(args)}"
    # Real answers, not empty ones.
    assert theirs[0] == max_lsn and len(theirs[7]) == 4 and len(theirs[20]) > 50 and len(theirs[22]) > 5
    assert theirs[-2]["kind"] == "int" and theirs[-1]["kind"] == "keyset" and len(theirs[-1]["max"]) == 2


def answers_agree(ours, theirs, calls):
    for (name, args), answer in zip(calls, theirs):
        if name == "iter_changes":
            mine = plain(pa.Table.from_batches(list(ours.iter_changes(*args))).to_pylist())
        elif name == "time_to_lsn":
            mine = ours.time_to_lsn(dt.datetime.fromisoformat(args[0]))
        else:
            mine = plain(getattr(ours, name)(*args))
        assert answer == mine, f"{name}{tuple(args)}"


def test_the_reference_client_reads_a_server_on_another_zone(reference_python, tmp_path):
    # A server on Pacific time in winter: one offset over every range, which 0.8.0 asks for
    # once and applies with DATEADD; its commit times in UTC, as this package reads them.
    db = tmp_path / "pacific.sim"
    with serve_shop(db, "2026-01-15 09:00:00", 2, "Pacific Standard Time") as options:
        ours = make_client({"backend": "sim", "simPath": str(db)})
        orders_min, max_lsn = ours.min_lsn("dbo_orders"), ours.max_lsn()
        some_time = ours.lsn_to_time(ours.nth_commit_after(orders_min, 40))
        calls = [("lsn_to_time", [max_lsn]), ("lsn_to_time", [orders_min]), ("time_to_lsn", [some_time]),
                 ("iter_changes", ["dbo_orders", orders_min, max_lsn, ["order_id", "status"], True, 50])]
        theirs = reference_answers(reference_python, options, calls)
        answers_agree(ours, theirs, calls)
        assert theirs[0].startswith("2026-01-15T17:")  # 09:00 PST is 17:00 UTC
        assert len(theirs[3]) > 50 and {r["_commit_ts"][:13] for r in theirs[3]} == {"2026-01-15T17"}


def test_the_reference_client_reads_commit_times_across_a_fall_back(reference_python, tmp_path):
    # Pacific time on the night clocks go back (1 November 2026, 02:00 PDT -> 01:00 PST), a
    # commit every 50 seconds for nearly three hours: the hour from 01:00 is read twice, and
    # only the order of the commits tells its two readings apart.
    db = tmp_path / "fallback.sim"
    with serve_shop(db, "2026-11-01 00:10:00", 0.02, "Pacific Standard Time") as options:
        ours = make_client({"backend": "sim", "simPath": str(db)})
        lsns, lsn = [], ours.min_lsn("dbo_orders")
        while lsn is not None and len(lsns) < 400:
            lsns.append(lsn)
            following = ours.nth_commit_after(lsn, 1)
            lsn = following if following != lsn else None
        calls = [("lsn_to_time", [lsn]) for lsn in lsns]
        # A UTC time in each reading of the repeated hour, and just before it: the commit looked
        # up is never after the time (an hour early in the first reading, as 0.8.0 seeks).
        seeks = ["2026-11-01T08:30:00", "2026-11-01T09:30:00", "2026-11-01T07:59:00"]
        calls += [("time_to_lsn", [at]) for at in seeks]
        # The change rows of the whole range, and of one ending inside the repeated hour.
        calls += [("iter_changes", ["dbo_orders", lsns[0], lsns[-1], ["order_id"], True, 50]),
                  ("iter_changes", ["dbo_orders", lsns[0], lsns[len(lsns) * 2 // 3], ["order_id"], True, 50])]
        theirs = reference_answers(reference_python, options, calls)
        answers_agree(ours, theirs, calls)
        times = [dt.datetime.fromisoformat(t) for t in theirs[:len(lsns)]]
        assert times == sorted(times) and times[-1] - times[0] > dt.timedelta(hours=2), (times[0], times[-1])
        for at, found in zip(seeks, theirs[len(lsns):]):
            assert times[lsns.index(found)] <= dt.datetime.fromisoformat(at), (at, found)
        assert times[lsns.index(theirs[len(lsns) + 1])] > dt.datetime.fromisoformat(seeks[1]) - dt.timedelta(minutes=1)
        commits = [row["_commit_ts"] for row in theirs[len(lsns) + len(seeks)]]
        assert len(commits) > 50 and commits == sorted(commits)
        local = json.loads(cli("sim", "info", "--db", db, "--json"))
        assert local["time_zone"] == "Pacific Standard Time"
