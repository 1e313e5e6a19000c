"""Exactly once across crashes: `mssql-cdc run` killed with SIGKILL under a running workload
right after each step of a batch (offsets written, bronze appended, facts appended, committed;
tests/kill_phases.py), each several times, restarted each time, ends with every bronze table equal to its change
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

import pytest

from deltalake import DeltaTable

from helpers import BINARY, TABLES, bronze_keys, change_table_keys, pipeline_text
from kill_phases import KillPlan, kill_at, phase_env
from sim_workload import stop_workload

pytestmark = pytest.mark.sigkill

# Each step after which a crash leaves a distinct state on disk is hit at least this often
# (tests/kill_phases.py), in at most this many kills.
PHASES = ["offsets_written", "bronze_appended", "facts_appended", "committed"]
TIMES, ODBC_TIMES = 3, 2
MAX_KILLS = 20
SOURCE = 'simPath = "shop.sim"\nmaxCommitsPerBatch = 25'  # the [source] lines after the backend


def kill_loop(cli, tmp_path, source, times, seed, backend="sim"):
    """SIGKILLs of `run` under a running workload, aimed at each step of a batch until every
    step has been hit `times` times, a final availableNow run, then every bronze table compared
    with its change table, row for row, and the facts."""
    rng = random.Random(seed)
    db = tmp_path / "shop.sim"
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=100 ms", source, backend=backend))
    phase_log = tmp_path / "phases.log"

    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", str(seed)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    plan = KillPlan(PHASES, times=times, max_kills=MAX_KILLS)
    try:
        time.sleep(0.5)
        while not plan.done():
            aim = plan.aim()
            time.sleep(rng.uniform(0, 0.3))  # the workload moves on between runs
            run = subprocess.Popen([BINARY, "run", "--json", str(pipeline)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, env=phase_env(phase_log, aim))
            landed = kill_at(run, phase_log, aim, timeout=30)
            _, stderr = run.communicate(timeout=30)
            assert run.returncode == -signal.SIGKILL, stderr
            plan.kills += 1
            plan.landed[landed] += 1
        print(f"{plan.kills} kills landed in {dict(plan.landed)}")
        plan.assert_covered()
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


def test_sigkill_after_every_step_of_a_batch_loses_and_duplicates_nothing(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)  # the real clock: the workload runs in real time
    cli("sim", "demo-schema", "--db", db)
    kill_loop(cli, tmp_path, SOURCE, TIMES, kill_schedule_seed())


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
        kill_loop(cli, tmp_path, source, ODBC_TIMES, kill_schedule_seed(), backend="odbc")
    finally:
        os.environ.pop("MSSQL_CDC_CRASH_PASSWORD", None)
        server.terminate()
        server.wait(timeout=30)
