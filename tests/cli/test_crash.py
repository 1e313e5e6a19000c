"""Exactly once across crashes: `mssql-cdc run` killed with SIGKILL at random moments under a
running workload, restarted each time, ends with every bronze table equal to its change
table, row for row, with no duplicate; and the facts hold one row per batch. Reading the
simulated database's file directly, and through the odbc backend from `sim serve`.

The seed of the kill schedule is printed, and MSSQL_CDC_CRASH_SEED replays one.
"""

import collections
import json
import os
import random
import signal
import subprocess
import time

from deltalake import DeltaTable

from helpers import BINARY, TABLES, bronze_keys, change_table_keys, pipeline_text, run_then_kill
from sim_workload import stop_workload

KILLS = 50
ODBC_KILLS = 20
SOURCE = 'simPath = "shop.sim"\nmaxCommitsPerBatch = 25'  # the [source] lines after the backend


def kill_loop(cli, tmp_path, source, kills, seed, backend="sim"):
    """SIGKILLs of `run` at random moments under a running workload, a final availableNow run,
    then every bronze table compared with its change table, row for row, and the facts."""
    rng = random.Random(seed)
    db = tmp_path / "shop.sim"
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=100 ms", source, backend=backend))

    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", str(seed)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    exits = collections.Counter()
    try:
        time.sleep(0.5)
        for _ in range(kills):
            exits[run_then_kill(pipeline, rng)] += 1
        assert exits[-signal.SIGKILL] >= kills // 2, exits
    finally:
        stop_workload(workload)

    pipeline.write_text(pipeline_text("availableNow", source, backend=backend))
    final = cli("run", "--json", pipeline)
    summary = json.loads(final.stdout.splitlines()[-1])
    assert summary["failed"] == []

    for ci in TABLES:
        source_rows = change_table_keys(db, ci)
        bronze = bronze_keys(tmp_path / "lake" / "bronze" / ci)
        assert len(source_rows) > 100, ci
        duplicates = [k for k, n in collections.Counter(bronze).items() if n > 1]
        assert not duplicates, (ci, duplicates[:5])
        missing = set(source_rows) - set(bronze)
        extra = set(bronze) - set(source_rows)
        assert not missing and not extra, (ci, sorted(missing)[:5], sorted(extra)[:5])
        assert sorted(bronze) == sorted(source_rows)

    # A kill mid-batch leaves data files no commit names; the next run deletes them.
    for ci in TABLES:
        table_dir = tmp_path / "lake" / "bronze" / ci
        named = {os.path.basename(f) for f in DeltaTable(str(table_dir)).file_uris()}
        on_disk = {p.name for p in table_dir.glob("*.parquet")}
        assert on_disk == named, (ci, sorted(on_disk - named)[:5])

    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    batch_rows = collections.Counter((r["app_id"], r["batch_id"]) for r in facts if r["event"] is None)
    assert batch_rows and max(batch_rows.values()) == 1
    for ci in TABLES:
        rows = sum(r["rows"] for r in facts if r["event"] is None and r["app_id"] == f"{ci}-v1")
        assert rows == len(change_table_keys(db, ci)), ci


def kill_schedule_seed():
    seed = int(os.environ.get("MSSQL_CDC_CRASH_SEED", random.randrange(1 << 30)))
    print(f"kill schedule seed {seed} (MSSQL_CDC_CRASH_SEED={seed} replays it)")
    return seed


def test_sigkill_at_random_moments_loses_and_duplicates_nothing(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)  # the real clock: the workload runs in real time
    cli("sim", "demo-schema", "--db", db)
    kill_loop(cli, tmp_path, SOURCE, KILLS, kill_schedule_seed())


def test_sigkill_of_runs_reading_through_odbc_from_sim_serve(cli, tmp_path):
    """The same through the odbc backend: unixODBC and FreeTDS against a `sim serve` process."""
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "login", "add", "--db", db, "--name", "crash_reader", "--password", "Crash-pw-1",
        "--db-owner")
    database = json.loads(cli("sim", "info", "--db", db, "--json").stdout)["database"]
    server = subprocess.Popen([BINARY, "sim", "serve", "--db", str(db), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        source = (f'connectionString = "Server=127.0.0.1,{port};Database={database};Encrypt=no"\n'
                  'user = "crash_reader"\npassword_env = "MSSQL_CDC_CRASH_PASSWORD"\n'
                  "maxCommitsPerBatch = 25")
        os.environ["MSSQL_CDC_CRASH_PASSWORD"] = "Crash-pw-1"
        kill_loop(cli, tmp_path, source, ODBC_KILLS, kill_schedule_seed(), backend="odbc")
    finally:
        os.environ.pop("MSSQL_CDC_CRASH_PASSWORD", None)
        server.terminate()
        server.wait(timeout=30)
