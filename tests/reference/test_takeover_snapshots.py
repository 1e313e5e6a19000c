"""A 0.8.0 job taken over in the two states a plain stream does not meet: a chunked snapshot
left half backfilled, and a stream 0.8.0 stopped with SchemaChangedError that the user
resolved. 0.8.0 itself (from PyPI, in its own venv) and this package run in turn on the same
bronze, facts and checkpoints, reading one simulated SQL Server through `sim serve`; one chunked
table's bronze (and so its plans table) is named in a Hive metastore, the others are at paths.

The waves of two chunked snapshots alternate between the libraries. 0.8.0 opens and plans the
customers' snapshot (an integer key) and reads a wave, this package reads the next (recording it
in the plans table as 0.8.0 does), 0.8.0 the next, and this package the last, which completes
it; 0.8.0 then goes on from the snapshot. This package opens and plans the order items'
snapshot (a key of two columns) and reads a wave, 0.8.0 the next, this package the next, and
0.8.0 the rest."""

import json
import sys
from pathlib import Path

import pytest
from reference_runs import run_child, served_shop
from sim_serving import BINARY
from spark_helpers import ADDED, change_table, delta, row_key, workload, workload_args

CHILD = Path(__file__).resolve().parent / "takeover_steps_child.py"
CHUNKED, WIDENED, OURS = "dbo_customers", "dbo_orders", "dbo_order_items"
# The chunked table's bronze is named in a Hive metastore (bronze.dbo_customers, a managed table
# under the warehouse); the other's is at a path.
NAMED = f"{CHUNKED}@name"


def command(*args):
    """A command line of this build's `mssql-cdc`, for a child's run: step."""
    return [BINARY, *map(str, args)]


def run_files(python, work, options, *steps):
    """({step: None or its error}, [files before the first step, then after each]) of the steps
    run in one child of `python`."""
    done = json.loads(run_child(python, CHILD, work, json.dumps(options), *steps).strip().splitlines()[-1])
    return done["outcome"], done["files"]


def run(python, work, options, *steps):
    """{step: None or its error} of the steps run in one child of `python`."""
    return run_files(python, work, options, *steps)[0]


def assert_changes_once(db, ci, bronze):
    """Every change row of the change table is in bronze once; after its snapshot's LSN when
    bronze holds a snapshot (the rows before it are in the snapshot)."""
    held = delta(bronze).to_pylist()
    snapshots = {r["_snapshot"] for r in held if r["_snapshot"] is not None}
    assert len(snapshots) <= 1, f"{ci}: more than one snapshot {snapshots}"
    after = next(iter(snapshots), "")
    rows = [{k: v for k, v in r.items() if k not in ADDED} for r in held if r["_operation"]]
    keys = [row_key(r) for r in rows]
    assert len(keys) == len(set(keys)), f"{ci}: bronze holds a change twice"
    changes = [r for r in change_table(db, ci).to_pylist() if r["_start_lsn"] > after]
    assert sorted(rows, key=row_key) == sorted(changes, key=row_key)


def plan_events(work, plans=None):
    """(event, wave) of each row of the plans table beside a chunked bronze (the named one's
    unless told), sorted."""
    rows = delta(plans or work / "warehouse" / "bronze.db" / f"{CHUNKED}_snapshot_plans").to_pylist()
    return sorted((r["event"], json.loads(r["detail"]).get("wave", -1)) for r in rows)


def assert_snapshot_whole(work, bronze, app_id):
    """The snapshot is whole: every key at its LSN once, each chunk of the plan read once, one
    completion row counting them."""
    snapshot = [r for r in delta(bronze).to_pylist() if r["_operation"] == 0]
    keys = [tuple(v for k, v in r.items() if k in ("customer_id", "order_id", "line_no")) for r in snapshot]
    assert len(set(keys)) == len(keys) > 0
    facts = [r for r in delta(work / "facts").to_pylist() if r["app_id"] == app_id]
    read = [json.loads(r["detail"])["chunk"] for r in facts if r["event"] == "snapshot_chunk"]
    assert sorted(read) == list(range(len(read))), read
    completion = [r for r in facts if r["event"] == "bootstrap"]
    assert len(completion) == 1 and completion[0]["rows"] == len(snapshot)


@pytest.mark.spark
@pytest.mark.slow
def test_a_half_backfilled_snapshot_and_a_resolved_schema_change_are_taken_over(cli, tmp_path, reference_python):
    with served_shop(cli, tmp_path, transactions=60, seed=31) as (db, options):
        work = tmp_path / "job"
        bronze = work / "bronze"
        named = work / "warehouse" / "bronze.db"
        # 0.8.0 opens a chunked snapshot, plans it and backfills one wave; its orders stream runs.
        # Then the source widens a column past int, and 0.8.0's next run of the stream stops with
        # SchemaChangedError (the same driver: the DBA's commands are a step of it).
        last = change_table(db, WIDENED).to_pylist()[-1]
        order = {k: (v.isoformat(sep=" ") if hasattr(v, "isoformat") else v) for k, v in last.items()
                 if not k.startswith("_")}
        order.update(order_id=10_000_000, customer_id=5_000_000_000)
        dba = tmp_path / "widen.json"
        dba.write_text(json.dumps([
            command("sim", "alter-column", "--db", db, "--table", "dbo.orders", "--column",
                    "customer_id bigint not null"),
            command("sim", "dml", "--db", db, "--json",
                    json.dumps([{"op": "insert", "table": "dbo.orders", "row": order}], default=str)),
            command(*workload_args(db, 20, seed=32))]))
        outcome = run(reference_python, work, options, f"open:{NAMED}", f"stream:{WIDENED}", f"run:{dba}",
                      f"stream:{WIDENED}")
        stopped = outcome.pop(f"stream:{WIDENED} (2)")
        assert outcome == {f"open:{NAMED}": None, f"stream:{WIDENED}": None, f"run:{dba}": None}, outcome
        assert stopped is not None and "SchemaChangedError" in stopped and "enableTypeWidening" in stopped, stopped
        planned = plan_events(work)
        chunks = sum(1 for event, _ in planned if event == "snapshot_chunk")

        # Ours reads the next wave of 0.8.0's snapshot and records it in 0.8.0's plans table as
        # 0.8.0 does; the user's fix of the schema change (type widening on bronze) lets the
        # orders stream go on; the chunked stream goes on from the snapshot.
        # It also opens and plans a chunked snapshot of the order items and reads a wave of it.
        assert run(sys.executable, work, options, f"wave:{NAMED}", f"widen:{WIDENED}", f"stream:{WIDENED}",
                   f"chunked:{NAMED}", f"open:{OURS}") == {
            f"wave:{NAMED}": None, f"widen:{WIDENED}": None, f"stream:{WIDENED}": None, f"chunked:{NAMED}": None,
            f"open:{OURS}": None}
        assert plan_events(work) == sorted(planned + [("snapshot_chunk", 1)] * chunks)
        ours_planned = plan_events(work, bronze / f"{OURS}_snapshot_plans")
        ours_chunks = sum(1 for event, _ in ours_planned if event == "snapshot_chunk")
        assert ours_planned == sorted([("snapshot_open", -1), ("snapshot_plan", -1)] + [("snapshot_chunk", 0)] * ours_chunks)
        assert 5_000_000_000 in {r["customer_id"] for r in delta(bronze / WIDENED).to_pylist()}
        assert_changes_once(db, WIDENED, bronze / WIDENED)
        assert_changes_once(db, CHUNKED, named / CHUNKED)

        # 0.8.0 reads the wave after ours and goes on with both tables; ours reads the rest and
        # completes the snapshot; 0.8.0 finds it complete and goes on from it.
        # 0.8.0 reads the next wave of the snapshot this package planned, and goes on with its
        # stream.
        workload(cli, db, 20, seed=33)
        steps = (f"wave:{NAMED}", f"chunked:{NAMED}", f"stream:{WIDENED}", f"wave:{OURS}", f"chunked:{OURS}")
        assert run(reference_python, work, options, *steps) == dict.fromkeys(steps)
        added = plan_events(work, bronze / f"{OURS}_snapshot_plans")
        for event in ours_planned:
            added.remove(event)
        assert added and set(added) == {("snapshot_chunk", 1)}, added
        assert_changes_once(db, OURS, bronze / OURS)
        workload(cli, db, 20, seed=34)
        steps = (f"backfill:{NAMED}", f"chunked:{NAMED}", f"stream:{WIDENED}", f"wave:{OURS}", f"chunked:{OURS}")
        assert run(sys.executable, work, options, *steps) == dict.fromkeys(steps)
        waves = sorted({wave for event, wave in plan_events(work) if event == "snapshot_chunk"})
        assert waves == list(range(len(waves))) and len(waves) >= 4, plan_events(work)
        # 0.8.0 reads the rest of the order items' snapshot and completes it.
        workload(cli, db, 20, seed=35)
        steps = (f"backfill:{NAMED}", f"chunked:{NAMED}", f"stream:{WIDENED}", f"backfill:{OURS}", f"chunked:{OURS}")
        assert run(reference_python, work, options, *steps) == dict.fromkeys(steps)
        waves = sorted({wave for event, wave in plan_events(work, bronze / f"{OURS}_snapshot_plans")
                        if event == "snapshot_chunk"})
        assert waves == list(range(len(waves))) and len(waves) >= 4, waves
        for ci, where in ((WIDENED, bronze), (CHUNKED, named), (OURS, bronze)):
            assert_changes_once(db, ci, where / ci)
        # Both snapshots are whole, each in the chunks the library that opened it planned.
        assert_snapshot_whole(work, named / CHUNKED, f"{CHUNKED}-v1")
        assert_snapshot_whole(work, bronze / OURS, f"{OURS}-v1")
