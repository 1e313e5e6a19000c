"""Exactly once for Spark's backfill across crashes: the driver calling backfill() is killed with
SIGKILL at random moments during its waves, 20 times, and started again; at the end every chunk
was read once, each key is once in the snapshot, the chunk facts rows agree with bronze, and
bronze's latest images are the table. The seed of the kill schedule is printed, and
MSSQL_CDC_CRASH_SEED replays one."""

import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from spark_helpers import delta, make_shop
from test_seed_dataframe import latest_images
from test_snapshot_source import current_rows

CHILD = Path(__file__).resolve().parent / "backfill_child.py"


def child(shop, work, *flags):
    return subprocess.Popen([sys.executable, str(CHILD), str(shop), str(work), *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)


def test_sigkill_of_the_backfill_driver_20_times(cli, tmp_path):
    seed = int(os.environ.get("MSSQL_CDC_CRASH_SEED", random.randrange(1 << 30)))
    print(f"kill schedule seed {seed} (MSSQL_CDC_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    shop = make_shop(cli, tmp_path, transactions=300)
    work = tmp_path / "work"
    kills = 0
    for trial in range(20):
        process = child(shop, work, *(["--open"] if trial == 0 else []))
        for line in process.stdout:  # the engine's log lines come first
            if line.startswith("ready"):
                break
        time.sleep(rng.uniform(0.3, 2.5))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += process.returncode == -signal.SIGKILL
    final = child(shop, work)
    out, _ = final.communicate(timeout=600)
    assert final.returncode == 0 and "wave done" in out, out
    assert kills >= 10, kills

    facts = [r for r in delta(str(work / "facts")).to_pylist() if r["app_id"] == "customers-chunked"]
    s = [r for r in facts if r["event"] == "snapshot_open"][0]["max_lsn"]
    chunk_rows = collections.Counter()
    for r in facts:
        if r["event"] == "snapshot_chunk":
            chunk_rows[json.loads(r["detail"])["chunk"]] += 1
    (plan,) = [json.loads(r["detail"]) for r in facts if r["event"] == "snapshot_plan"]
    assert sorted(chunk_rows) == list(range(plan["chunks"])) and set(chunk_rows.values()) == {1}
    bronze = delta(str(work / "bronze")).to_pylist()
    snapshot = [r for r in bronze if r["_operation"] == 0]
    assert all(r["_snapshot"] == s for r in snapshot)
    per_key = collections.Counter(r["customer_id"] for r in snapshot)
    assert max(per_key.values()) == 1, [k for k, n in per_key.items() if n > 1][:5]
    (done,) = [r for r in facts if r["event"] == "bootstrap"]
    assert done["rows"] == len(snapshot)
    table = current_rows(shop, "dbo_customers", ("customer_id",))
    assert set(latest_images(bronze)) == set(table)
