"""Exactly once for Spark's backfill across crashes: the driver calling backfill() is killed with
SIGKILL in each phase of a wave (tests/kill_phases.py: about to read, with the wave in bronze
but not yet in the facts, and with both written), once in each, each driver after the first
starting where a killed one left off, and started again;
at the end every chunk was read once, each key is once in the snapshot, the chunk facts rows
agree with bronze, and bronze's latest images are the table."""

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kill_phases import KillPlan, kill_at, phase_env
from spark_helpers import delta, make_shop
from test_seed_dataframe import latest_images
from test_snapshot_source import current_rows

pytestmark = pytest.mark.sigkill

CHILD = Path(__file__).resolve().parent / "backfill_child.py"


def child(shop, work, env, *flags):
    return subprocess.Popen([sys.executable, str(CHILD), str(shop), str(work), *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)


def test_sigkill_of_the_backfill_driver_in_every_phase_of_a_wave(cli, tmp_path):
    shop = make_shop(cli, tmp_path, transactions=300)
    work, phase_log = tmp_path / "work", tmp_path / "phases.log"
    plan = KillPlan(["reading", "in_bronze", "recorded"], times=1, max_kills=8)
    opened = False
    while not plan.done():
        aim = plan.aim()
        process = child(shop, work, phase_env(phase_log, aim), *([] if opened else ["--open"]))
        for line in process.stdout:  # the engine's log lines come first
            if line.startswith("ready"):
                break
        opened = True
        landed = kill_at(process, phase_log, aim, timeout=120)
        assert landed is not None, "the backfill ended before it was killed: give it more chunks"
        plan.kills += 1
        plan.landed[landed] += 1
    print(f"{plan.kills} kills landed in {dict(plan.landed)}")
    plan.assert_covered()
    final = child(shop, work, dict(os.environ))
    out, _ = final.communicate(timeout=600)
    assert final.returncode == 0 and "wave done" in out, out

    facts = [r for r in delta(str(work / "facts")).to_pylist() if r["app_id"] == "customers-chunked"]
    s = [r for r in facts if r["event"] == "snapshot_open"][0]["max_lsn"]
    chunk_rows = collections.Counter()
    for r in facts:
        if r["event"] == "snapshot_chunk":
            chunk_rows[json.loads(r["detail"])["chunk"]] += 1
    (plan,) = [json.loads(r["detail"]) for r in facts if r["event"] == "snapshot_plan"]
    assert sorted(chunk_rows) == list(range(plan["chunk_count"])) and set(chunk_rows.values()) == {1}
    bronze = delta(str(work / "bronze")).to_pylist()
    snapshot = [r for r in bronze if r["_operation"] == 0]
    assert all(r["_snapshot"] == s for r in snapshot)
    per_key = collections.Counter(r["customer_id"] for r in snapshot)
    assert max(per_key.values()) == 1, [k for k, n in per_key.items() if n > 1][:5]
    (done,) = [r for r in facts if r["event"] == "bootstrap"]
    assert done["rows"] == len(snapshot)
    table = current_rows(shop, "dbo_customers", ("customer_id",))
    assert set(latest_images(bronze)) == set(table)
