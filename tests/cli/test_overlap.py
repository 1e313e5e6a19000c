"""Runs that overlap: two or three `mssql-cdc run` processes started together on one pipeline,
round after round under a live workload, as a scheduler that starts the next run before the
last one ended would. Each table belongs to one run at a time (the others refuse it and exit
3), and bronze ends equal to the change tables, row for row, with no duplicate. A run
SIGKILLed while it holds every table leaves no lock behind: the next run starts at once.
"""

import json
import signal
import subprocess
import time

import pytest

from deltalake import DeltaTable

from helpers import BINARY, TABLES, pipeline_text
from test_crash import bronze_keys, change_table_keys

SOURCE = 'simPath = "shop.sim"\nmaxCommitsPerBatch = 10'


def start_run(pipeline, timeout):
    return subprocess.Popen([BINARY, "run", "--json", "--timeout", str(timeout), str(pipeline)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def summary_of(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def assert_bronze_equals_change_tables(tmp_path, db):
    for ci in TABLES:
        source = change_table_keys(db, ci)
        bronze = bronze_keys(tmp_path / "lake" / "bronze" / ci)
        assert len(bronze) == len(set(bronze)), f"{ci}: duplicated change rows"
        assert sorted(bronze) == sorted(source), ci


def test_overlapping_runs_share_no_table_and_lose_or_double_nothing(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=50 ms", SOURCE))
    workload = subprocess.Popen([BINARY, "sim", "workload", "--db", str(db), "--tps", "150",
                                 "--duration", "120", "--statements", "3", "--seed", "11"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    refusals = 0
    try:
        time.sleep(0.3)
        for processes in (2, 2, 2, 3, 3, 3):
            runs = [start_run(pipeline, 1.5) for _ in range(processes)]
            owners = {ci: 0 for ci in TABLES}
            for run in runs:
                stdout, stderr = run.communicate(timeout=60)
                assert run.returncode in (0, 3), stderr
                summary = summary_of(stdout)
                assert summary["failed"] == [], stderr
                refusals += len(summary["refused"])
                for ci in TABLES:
                    if ci not in summary["refused"]:
                        owners[ci] += 1
                for line in stderr.splitlines():
                    if "refused" in line:
                        assert "CheckpointInUseError" in line and "is in use by process" in line, line
            # Every table ran in some process of the round.
            assert all(n >= 1 for n in owners.values()), owners
    finally:
        workload.send_signal(signal.SIGINT)
        _, workload_err = workload.communicate(timeout=60)
    assert workload.returncode == 0, workload_err
    assert refusals > 0, "the runs never overlapped"

    pipeline.write_text(pipeline_text("availableNow", SOURCE))
    final = cli("run", "--json", pipeline)
    assert summary_of(final.stdout)["refused"] == []
    assert_bronze_equals_change_tables(tmp_path, db)


@pytest.mark.sigkill
def test_a_sigkilled_holder_leaves_no_lock_and_the_next_run_owns_every_table(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 1000, "--transactions", 300, "--seed", 5)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=50 ms", SOURCE))
    for _ in range(3):
        holder = subprocess.Popen([BINARY, "run", "--json", str(pipeline)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        batches = 0
        for line in holder.stdout:  # until it holds every table and has written a batch
            batches += json.loads(line)["event"] == "batch"
            if batches >= len(TABLES):
                break
        holder.kill()
        holder.wait()
        successor = start_run(pipeline, 0.5)
        stdout, stderr = successor.communicate(timeout=60)
        assert successor.returncode == 0, stderr
        assert summary_of(stdout)["refused"] == []
    pipeline.write_text(pipeline_text("availableNow", SOURCE))
    cli("run", "--json", pipeline)
    assert_bronze_equals_change_tables(tmp_path, db)
    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    batches = [(r["app_id"], r["batch_id"]) for r in facts if r["event"] is None]
    assert len(batches) == len(set(batches))
