"""Exactly once across a capture-instance switch on Spark: a driver streaming dbo.orders, which
starts its query again when it stops at the newer instance, is killed with SIGKILL at random
moments under a running workload (4 kills: one before the switch, one around the restarted
query's first batch, the switch batch, and two after it), slow enough for the stream to keep up, while a
DBA adds a column and enables the newer instance as one of the drivers runs; then a final
availableNow run. Bronze holds every change once, the
older instance's below the newer one's start and the newer's from it, and the facts one
capture_instance_switched row. The seed of the kill schedule is printed, and
MSSQL_CDC_CRASH_SEED replays one."""

import collections
import os
import random
import pytest
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from sim_workload import stop_workload
from spark_helpers import ROOT, change_table, delta, row_key

from mssql_cdc import _core

pytestmark = pytest.mark.sigkill

CHILD = Path(__file__).resolve().parent / "switch_child.py"
KILLS = 4
SWITCH_KILL = 1  # the kill during which the DBA switches instances
OLD, NEW = "dbo_orders", "dbo_orders_v2"


def child(db, work, *args):
    """The child driver, its stderr (Spark's and the engine's log) kept in WORK_DIR/../child.log."""
    log = open(work.parent / "child.log", "a")
    with log:
        return subprocess.Popen([sys.executable, str(CHILD), str(db), str(work), *args], stdout=subprocess.PIPE,
                                stderr=log, text=True)


def log_tail(work, lines=40):
    """The end of the children's stderr, for an assertion's message."""
    return "\n".join((work.parent / "child.log").read_text(errors="replace").splitlines()[-lines:])


def wait_for_line(process, text, timeout):
    """Whether the child prints a line starting with `text` within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            return False
        if line.startswith(text):
            return True
    return False


def test_sigkill_of_the_driver_before_at_and_after_a_switch(cli, tmp_path):
    seed = int(os.environ.get("MSSQL_CDC_CRASH_SEED", random.randrange(1 << 30)))
    print(f"kill schedule seed {seed} (MSSQL_CDC_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    db, work = tmp_path / "shop.sim", tmp_path / "work"
    cli("sim", "create", "--db", db)  # the real clock: the workload runs in real time
    cli("sim", "demo-schema", "--db", db)
    binary = os.environ.get("MSSQL_CDC_BIN", str(ROOT / "build" / "mssql-cdc"))
    workload = subprocess.Popen(
        [binary, "sim", "workload", "--db", str(db), "--tps", "3", "--duration", "600", "--statements", "3",
         "--seed", str(seed), "--tables", "dbo.orders"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kills, restarts = 0, 0
    try:
        for kill in range(KILLS):
            process = child(db, work)
            for line in process.stdout:  # the engine's log lines come first
                if line.startswith("started"):
                    break
            if kill == SWITCH_KILL:
                # The switch while a query runs: it stops at S, the driver starts it again, and
                # the kill falls around the restarted query's first batch, the switch batch.
                time.sleep(rng.uniform(0.5, 2.0))
                cli("sim", "add-column", "--db", db, "--table", "dbo.orders", "--column", "note varchar(20)")
                cli("sim", "enable-cdc", "--db", db, "--table", "dbo.orders", "--capture-instance", NEW)
                assert wait_for_line(process, "restart after the switch", timeout=180), log_tail(work)
                restarts += 1
                time.sleep(rng.uniform(0.0, 3.0))
            else:
                time.sleep(rng.uniform(1.0, 6.0))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
            kills += process.returncode == -signal.SIGKILL
    finally:
        stop_workload(workload)
    assert kills >= KILLS // 2, kills
    assert restarts == 1
    final = child(db, work, "final")
    out, _ = final.communicate(timeout=900)
    assert final.returncode == 0, out + log_tail(work)

    s = _core.open_sim_source(str(db)).min_lsn(NEW)
    expected = [row_key(r) for r in change_table(db, OLD).to_pylist() if r["_start_lsn"] < s]
    newer = [row_key(r) for r in change_table(db, NEW).to_pylist()]
    assert len(newer) > 20, "the newer instance captured too little to test"
    bronze = [row_key(r) for r in delta(str(work / "bronze")).to_pylist()]
    duplicates = [k for k, n in collections.Counter(bronze).items() if n > 1]
    assert not duplicates, duplicates[:5]
    assert sorted(bronze) == sorted(expected + newer)
    facts = delta(str(work / "facts")).to_pylist()
    switched = [(r["min_lsn"], r["detail"]) for r in facts if r["event"] == "capture_instance_switched"]
    assert switched == [(s, f"{OLD} -> {NEW}")]
    batch_rows = collections.Counter(r["batch_id"] for r in facts if r["event"] is None)
    assert max(batch_rows.values()) == 1
