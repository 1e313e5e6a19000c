"""The native engine's core on each object store, against its emulator (moto's S3 server,
Azurite, fake-gcs-server): streams, bootstrap, many tables, data loss and a re-snapshot after it with every
table and checkpoint in the store, two runs racing on one pipeline, SIGKILLs under a workload,
and two processes appending to one table through the Python bindings. Every table is read back
by delta-rs.

What only one store has (its emulator's own conditional writes, its credentials, its refusals)
is in test_s3_store.py, test_azure_store.py and test_gcs_store.py.
"""

import collections
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from azure_emulator import AzureEmulator  # noqa: E402
from gcs_emulator import GcsEmulator  # noqa: E402
from helpers import BINARY, TABLES, run_then_kill  # noqa: E402
from s3_emulator import S3Emulator  # noqa: E402
from sim_workload import stop_workload  # noqa: E402
from store_helpers import (assert_bronze_equals_change_tables, make_db, place_name, run,  # noqa: E402
                           summary, write_pipeline)


EMULATORS = {"s3": S3Emulator, "azure": AzureEmulator, "gcs": GcsEmulator}


@pytest.fixture(scope="module", params=sorted(EMULATORS))
def store(request):
    emulator = EMULATORS[request.param]()
    yield emulator
    emulator.stop()


@pytest.fixture
def place(store, request):
    """A bucket or container of the test's own."""
    name = place_name(request)
    store.create(name)
    return name


def test_streams_with_tables_and_checkpoints_in_the_store(store, place, tmp_path):
    db = make_db(store, tmp_path)
    pipeline = write_pipeline(tmp_path, store.uri(place), source="maxCommitsPerBatch = 40")
    first = summary(run(store, "run", "--json", pipeline))
    assert first["failed"] == [] and all(t["batches"] >= 1 for t in first["tables"].values())
    run(store, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 60, "--seed", 4)
    second = summary(run(store, "run", "--json", pipeline))
    assert second["failed"] == []
    assert_bronze_equals_change_tables(store, store.uri(place), db)
    # Nothing local: every table and checkpoint is in the store.
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()
    keys = store.keys(place)
    for ci in TABLES:
        assert f"checkpoints/{ci}/stream.json" in keys
        assert any(k.startswith(f"checkpoints/{ci}/commits/") for k in keys)
    facts = DeltaTable(f"{store.uri(place)}/lake/ops/facts", storage_options=store.storage_options())
    rows = facts.to_pyarrow_table().to_pylist()
    per_batch = collections.Counter((r["app_id"], r["batch_id"]) for r in rows if r["event"] is None)
    assert per_batch and max(per_batch.values()) == 1
    status = run(store, "status", "--json", pipeline, check=False)
    assert status.returncode in (0, 1), status.stderr
    doc = json.loads(status.stdout)
    assert [t["capture_instance"] for t in doc["tables"]] == TABLES
    assert all(t["facts_rows"] >= 1 for t in doc["tables"])


def test_bootstrap_into_the_store_takes_the_rows_then_the_changes(store, place, tmp_path):
    db = make_db(store, tmp_path)
    pipeline = write_pipeline(tmp_path, store.uri(place), stream="bootstrap = true",
                              tables='tables = ["dbo_customers"]')
    run(store, "run", "--json", pipeline)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        customers = conn.execute('SELECT COUNT(*) FROM "dbo.customers"').fetchone()[0]
    run(store, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 40, "--seed", 9)
    run(store, "run", "--json", pipeline)
    table = DeltaTable(f"{store.uri(place)}/lake/bronze/dbo_customers", storage_options=store.storage_options())
    rows = table.to_pyarrow_table().to_pylist()
    assert sum(1 for r in rows if r["_operation"] == 0) == customers
    changes = [r for r in rows if r["_operation"] != 0]
    assert changes and min(r["_start_lsn"] for r in changes) > max(
        r["_start_lsn"] for r in rows if r["_operation"] == 0)


def test_data_loss_fails_the_table_and_commits_no_batch_of_it(store, place, tmp_path):
    db = make_db(store, tmp_path, manual_clock=True)
    run(store, "sim", "clock", "--db", db, "--advance", 7200)
    run(store, "sim", "idle", "--db", db)
    run(store, "sim", "cleanup", "--db", db, "--retention-minutes", 60)
    pipeline = write_pipeline(
        tmp_path, store.uri(place),
        tables='[tables.dbo_customers]\n\n[tables.dbo_orders]\nstartingLsn = "0x00000000000000000001"\n')
    result = run(store, "run", pipeline, check=False)
    assert result.returncode == 1
    failed = [line for line in result.stderr.splitlines() if "DataLossError" in line]
    assert failed and all("dbo_orders" in line for line in failed), result.stderr
    keys = store.keys(place)
    assert any(k.startswith("checkpoints/dbo_customers/") for k in keys)
    assert not any(k.startswith("checkpoints/dbo_orders/commits/") for k in keys)


def test_resnapshot_after_data_loss_keeps_its_generations_in_the_store(store, place, tmp_path):
    """on_data_loss = "resnapshot" with the checkpoint in the store: cleanup purges changes the
    stream never read, and the next run snapshots the table again as generation 1, with the
    generation's state, checkpoint and facts row in the store."""
    db = make_db(store, tmp_path, manual_clock=True)
    pipeline = write_pipeline(tmp_path, store.uri(place), stream='bootstrap = true\non_data_loss = "resnapshot"',
                              tables='tables = ["dbo_orders"]')
    run(store, "run", pipeline)
    run(store, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 40, "--seed", 4)
    run(store, "sim", "clock", "--db", db, "--advance", 7200)
    run(store, "sim", "idle", "--db", db)
    run(store, "sim", "cleanup", "--db", db, "--retention-minutes", 60)
    run(store, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 40, "--seed", 5)
    result = run(store, "run", "--json", pipeline)
    assert summary(result)["failed"] == []
    assert "snapshotting the table again as generation 1" in result.stdout + result.stderr
    assert "checkpoints/dbo_orders/_mssql_cdc_generation.json" in store.keys(place, "checkpoints/dbo_orders")
    assert not (tmp_path / "checkpoints").exists()
    facts = DeltaTable(f"{store.uri(place)}/lake/ops/facts", storage_options=store.storage_options())
    rows = facts.to_pyarrow_table().to_pylist()
    assert [r["app_id"] for r in rows if r["event"] == "resnapshot"] == ["dbo_orders-v1.g1"]


def test_two_runs_racing_on_one_pipeline_never_both_write_a_batch(store, place, tmp_path):
    db = make_db(store, tmp_path, transactions=50)
    pipeline = write_pipeline(tmp_path, store.uri(place), trigger="processingTime=100 ms",
                              source="maxCommitsPerBatch = 10")
    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", "11"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    runs = []
    try:
        for _ in range(2):
            runs.append(subprocess.Popen([BINARY, "run", "--json", str(pipeline)], env=store.env(),
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        time.sleep(8)
    finally:
        stop_workload(workload)
    outcomes = []
    for process in runs:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        outcomes.append((process.returncode, err))
    # Nothing locks an object-store checkpoint: a run that finds the other ahead of it stops
    # that table before it writes (the batch's offsets another run planned, a commit another
    # run made first, or bronze ahead of its checkpoint); no other failure is acceptable.
    refusals = ("CheckpointInUseError", "ConcurrentModificationError", "disagree about app_id")
    for code, err in outcomes:
        assert code in (0, 1, 3), err
        for line in err.splitlines():
            if "failed" in line and "Error" in line:
                assert any(r in line for r in refusals), line
    final = write_pipeline(tmp_path, store.uri(place), source="maxCommitsPerBatch = 500")
    assert summary(run(store, "run", "--json", final))["failed"] == []
    assert_bronze_equals_change_tables(store, store.uri(place), db)
    for ci in TABLES:
        table = DeltaTable(f"{store.uri(place)}/lake/bronze/{ci}", storage_options=store.storage_options())
        versions = [h["version"] for h in table.history()]
        assert sorted(versions) == list(range(len(versions))), ci


@pytest.mark.sigkill
def test_sigkill_twenty_times_under_a_workload_loses_and_duplicates_nothing(store, place, tmp_path):
    seed = random.randrange(1 << 30)
    print("kill schedule seed", seed)
    rng = random.Random(seed)
    db = make_db(store, tmp_path, transactions=20)
    pipeline = write_pipeline(tmp_path, store.uri(place), trigger="processingTime=100 ms",
                              source="maxCommitsPerBatch = 25")
    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", str(seed)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    exits = collections.Counter()
    try:
        for _ in range(20):
            exits[run_then_kill(pipeline, rng, low=0.3, env=store.env())] += 1
        assert exits[-signal.SIGKILL] >= 10, exits
    finally:
        stop_workload(workload)
    final = write_pipeline(tmp_path, store.uri(place), source="maxCommitsPerBatch = 500")
    assert summary(run(store, "run", "--json", final))["failed"] == []
    assert_bronze_equals_change_tables(store, store.uri(place), db)
    # A kill mid-batch leaves data files no commit names; the next run deletes them.
    for ci in TABLES:
        table = DeltaTable(f"{store.uri(place)}/lake/bronze/{ci}", storage_options=store.storage_options())
        named = {uri.rsplit("/", 1)[1] for uri in table.file_uris()}
        stored = {k.rsplit("/", 1)[1] for k in store.keys(place, f"lake/bronze/{ci}/")
                  if k.endswith(".parquet") and "/_delta_log/" not in k}
        assert stored == named, (ci, sorted(stored - named)[:5])


APPENDER = """
import sys
import pyarrow as pa
from mssql_cdc import _core
uri, writer, appends = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(appends):
    _core.delta_append(uri, pa.table({"writer": [writer], "n": [i]}))
"""


def test_two_processes_appending_to_one_table_never_both_win_a_version(store, place):
    """The Python bindings' appends, from two processes at once: every append lands in a
    version of its own, none is lost, and the log has no gap. Past version 10 each append
    opens the table from its checkpoint, by a listing that starts after it."""
    uri = f"{store.uri(place)}/lake/raced"
    env = store.env()
    appends = 12
    creator = subprocess.run(
        [sys.executable, "-c", "import sys, pyarrow as pa; from mssql_cdc import _core; "
         "_core.delta_create(sys.argv[1], pa.schema([('writer', pa.int64()), ('n', pa.int64())]))", uri],
        env=env, capture_output=True, text=True, timeout=120)
    assert creator.returncode == 0, creator.stderr
    writers = [subprocess.Popen([sys.executable, "-c", APPENDER, uri, str(w), str(appends)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for w in range(2)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    table = DeltaTable(uri, storage_options=store.storage_options())
    rows = sorted((r["writer"], r["n"]) for r in table.to_pyarrow_table().to_pylist())
    assert rows == sorted((w, i) for w in range(2) for i in range(appends))
    assert sorted(h["version"] for h in table.history()) == list(range(2 * appends + 1))
    assert "lake/raced/_delta_log/_last_checkpoint" in store.keys(place, "lake/raced/_delta_log")
