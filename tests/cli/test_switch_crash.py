"""Exactly once across a capture-instance switch: `mssql-cdc run` of dbo.orders killed with
SIGKILL at random moments (10 kills) under a running workload, while a DBA adds a column and
enables a newer capture instance between the kills; a final availableNow run. Bronze then holds
every change once, the older instance's below the newer one's start and the newer's from it,
and the facts one capture_instance_switched row.

The seed of the kill schedule is printed, and MSSQL_CDC_CRASH_SEED replays one.
"""

import collections
import json
import random
import signal
import subprocess
import time

import pytest

from deltalake import DeltaTable

from helpers import BINARY, bronze_keys, change_table_keys, pipeline_text, run_then_kill
from sim_workload import stop_workload
from test_crash import kill_schedule_seed

pytestmark = pytest.mark.sigkill

KILLS = 10
OLD, NEW = "dbo_orders", "dbo_orders_v2"
SOURCE = 'simPath = "shop.sim"\nmaxCommitsPerBatch = 10'


def test_sigkill_around_a_switch_loses_and_duplicates_nothing(cli, tmp_path):
    seed = kill_schedule_seed()
    rng = random.Random(seed)
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)  # the real clock: the workload runs in real time
    cli("sim", "demo-schema", "--db", db)
    pipeline = tmp_path / "pipeline.toml"
    tables = f'tables = ["{OLD}"]'
    pipeline.write_text(pipeline_text("processingTime=100 ms", SOURCE, tables=tables))
    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", str(seed), "--tables", "dbo.orders"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    exits = collections.Counter()
    try:
        time.sleep(0.5)
        for kill in range(KILLS):
            if kill == KILLS // 2:
                cli("sim", "add-column", "--db", db, "--table", "dbo.orders", "--column", "note varchar(20)")
                cli("sim", "enable-cdc", "--db", db, "--table", "dbo.orders", "--capture-instance", NEW)
            exits[run_then_kill(pipeline, rng)] += 1
        assert exits[-signal.SIGKILL] >= KILLS // 2, exits
    finally:
        stop_workload(workload)

    pipeline.write_text(pipeline_text("availableNow", SOURCE, tables=tables))
    summary = json.loads(cli("run", "--json", pipeline).stdout.splitlines()[-1])
    assert summary["failed"] == []

    s = json.loads(cli("sim", "info", "--db", db, "--json").stdout)
    start = next(ci["start_lsn"] for ci in s["capture_instances"] if ci["name"] == NEW)
    expected = [k for k in change_table_keys(db, OLD) if k[0] < start] + change_table_keys(db, NEW)
    assert len(change_table_keys(db, NEW)) > 20, "the newer instance captured too little to test"
    bronze = bronze_keys(tmp_path / "lake" / "bronze" / OLD)
    duplicates = [k for k, n in collections.Counter(bronze).items() if n > 1]
    assert not duplicates, duplicates[:5]
    assert sorted(bronze) == sorted(expected)
    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    switched = [r for r in facts if r["event"] == "capture_instance_switched"]
    assert [(r["detail"], r["min_lsn"]) for r in switched] == [(f"{OLD} -> {NEW}", start)]
    batch_rows = collections.Counter(r["batch_id"] for r in facts if r["event"] is None)
    assert max(batch_rows.values()) == 1
