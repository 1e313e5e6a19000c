"""The `mssql-cdc` console script a pip install puts on the PATH (python/mssql_cdc/_command_line.py).

It runs the same command line as the executable (RunCommandLine, inside the extension), so the
rest of this folder, which runs the executable, covers the commands themselves. What differs is
the process around them: Python's interpreter, its signal handling and its exit. So one run, one
status, one refused input, one SIGTERM and one SIGKILL go through the script, each compared with
what the executable does.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from deltalake import DeltaTable

from helpers import TABLES, bronze_keys, change_table_keys, pipeline_text
from test_run import json_lines, make_db, read_events, write_pipeline

# The script pip installed beside the interpreter running the tests (.venv/bin/mssql-cdc).
SCRIPT = str(Path(sys.executable).with_name("mssql-cdc"))


def script(*args, check=True):
    result = subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"{SCRIPT} {' '.join(map(str, args))} exited with {result.returncode}:\n"
                             f"{result.stderr}\n{result.stdout[-3000:]}")
    return result


def assert_bronze_is_the_change_table(tmp_path, db):
    for ci in TABLES:
        source = change_table_keys(db, ci)
        bronze = bronze_keys(tmp_path / "lake" / "bronze" / ci)
        assert sorted(bronze) == sorted(source) and len(source) > 0, ci


def test_the_script_is_the_executable_s_command_line(cli):
    assert os.access(SCRIPT, os.X_OK), f"{SCRIPT}: pip install . puts the console script there"
    assert script("--version").stdout == cli("--version").stdout
    # An unknown command: the same exit status and the same message from both.
    ours, theirs = script("frobnicate", check=False), cli("frobnicate", check=False)
    assert ours.returncode == theirs.returncode != 0
    assert ours.stderr == theirs.stderr and "subcommand" in ours.stderr


def test_a_run_and_a_status_through_the_script(cli, tmp_path):
    db = make_db(cli, tmp_path)
    pipeline = write_pipeline(tmp_path)
    run = script("run", "--json", pipeline)
    summary = json_lines(run.stdout)[-1]
    assert summary["event"] == "summary" and summary["exit_status"] == 0 and summary["failed"] == []
    assert_bronze_is_the_change_table(tmp_path, db)

    status = script("status", "--json", pipeline, check=False)
    executable = cli("status", "--json", pipeline, check=False)
    assert status.returncode == executable.returncode
    ours, theirs = json.loads(status.stdout), json.loads(executable.stdout)
    assert [t["capture_instance"] for t in ours["tables"]] == TABLES
    assert ours["healthy"] == theirs["healthy"]
    assert [t["verdict"] for t in ours["tables"]] == [t["verdict"] for t in theirs["tables"]]


def test_a_refused_input_exits_2_and_writes_nothing(cli, tmp_path):
    make_db(cli, tmp_path)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("availableNow", 'simPath = "shop.sim"\nmaxCommitsPerBatch = "lots"'))
    ours, theirs = script("run", pipeline, check=False), cli("run", pipeline, check=False)
    assert ours.returncode == theirs.returncode == 2
    assert ours.stderr == theirs.stderr and "maxCommitsPerBatch" in ours.stderr
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()


def test_sigterm_stops_the_script_cleanly(cli, tmp_path):
    db = make_db(cli, tmp_path, transactions=100)
    pipeline = write_pipeline(tmp_path, trigger="processingTime=200 ms")
    proc = subprocess.Popen([SCRIPT, "run", "--json", str(pipeline)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        seen = set()
        read_events(proc, lambda e: e["event"] == "batch" and (seen.add(e["table"]) or seen == set(TABLES)), 60)
        proc.send_signal(signal.SIGTERM)
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    summary = json_lines(rest)[-1]
    assert summary["event"] == "summary" and {t["status"] for t in summary["tables"].values()} == {"stopped"}
    assert_bronze_is_the_change_table(tmp_path, db)


def test_a_sigkilled_script_resumes_exactly_once(cli, tmp_path):
    """Killed after its first batches are committed, with most of the backlog still unread, then
    run again: bronze holds every change once."""
    db = make_db(cli, tmp_path, transactions=600)
    pipeline = write_pipeline(tmp_path, trigger="processingTime=100 ms", source_extra="maxCommitsPerBatch = 10")
    proc = subprocess.Popen([SCRIPT, "run", "--json", str(pipeline)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        batches, deadline = 0, time.time() + 60
        while batches < 3 and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            batches += json.loads(line)["event"] == "batch"
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert batches >= 3 and proc.returncode == -signal.SIGKILL
    read = sum(DeltaTable(str(tmp_path / "lake" / "bronze" / ci)).to_pyarrow_table().num_rows
               for ci in TABLES if (tmp_path / "lake" / "bronze" / ci / "_delta_log").exists())
    assert 0 < read < sum(len(change_table_keys(db, ci)) for ci in TABLES)

    pipeline.write_text(pipeline.read_text().replace("processingTime=100 ms", "availableNow"))
    summary = json_lines(script("run", "--json", pipeline).stdout)[-1]
    assert summary["failed"] == []
    assert_bronze_is_the_change_table(tmp_path, db)
