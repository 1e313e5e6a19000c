"""Chunked snapshots in `mssql-cdc run` (the lab check t10 of the reference, natively): the
bootstrap opens the snapshot at S and the stream starts there, while the backfill inside the same
process reads the table in waves under a continuous writer. Checked against the simulated
database: the chunks tile the key space, no chunk row is older than its stamp, every change after
S is in bronze once, and the latest image per key of bronze equals a fresh full snapshot's. The
same through the odbc backend from `sim serve`, and with SIGKILLs of `run` during the waves.
The writer's transactions of several statements delete and insert rows in one commit, which is
how SQL Server logs an update of a key."""

import collections
import json
import os
import random
import signal
import subprocess
import time

import pytest

from deltalake import DeltaTable

from plan_rows import planned_chunks
from helpers import BINARY, TABLES, SimServer, change_table_keys, pipeline_text, run_then_kill

KEYS = {"dbo_customers": ("customer_id",), "dbo_orders": ("order_id",),
        "dbo_order_items": ("order_id", "line_no")}
ODBC_LOGIN = ("chunked_reader", "Chunked-pw-1")


def make_db(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)  # the real clock: the writer runs in real time
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 1000, "--transactions", 600, "--seed", 3, "--statements", 3)
    return db


def odbc_source(cli, db, server):
    cli("sim", "login", "add", "--db", db, "--name", ODBC_LOGIN[0], "--password", ODBC_LOGIN[1], "--db-owner")
    database = json.loads(cli("sim", "info", "--db", db, "--json").stdout)["database"]
    os.environ["MSSQL_CDC_CHUNKED_PASSWORD"] = ODBC_LOGIN[1]
    return (f'connectionString = "Server=127.0.0.1,{server.port};Database={database};Encrypt=no"\n'
            f'user = "{ODBC_LOGIN[0]}"\npassword_env = "MSSQL_CDC_CHUNKED_PASSWORD"')


def write_pipeline(tmp_path, name, trigger, source, backend, snapshot, silver=False):
    extra = f'bootstrap = true\nsnapshot = "{snapshot}"\n\n[backfill]\nchunk_rows = 40\npartitions = 2\ntarget_wave_seconds = 0'
    if silver:
        extra += '\n\n[silver]\ntarget = "lake/silver/{ci}"'
    text = pipeline_text(trigger, source, backend=backend, stream_extra=extra)
    text = text.replace("lake/bronze/{ci}", f"lake/{name}/{{ci}}") \
        .replace("checkpoints/{ci}", f"checkpoints/{name}/{{ci}}").replace('"{ci}-v1"', f'"{{ci}}-{name}"')
    path = tmp_path / f"{name}-{trigger.split('=')[0]}.toml"
    path.write_text(text)
    return path


def order(row):
    return (row["_start_lsn"], row["_command_id"] or 0, row["_seqval"] or "", row["_operation"])


def image(row):
    return tuple(sorted((k, str(v)) for k, v in row.items() if not k.startswith("_")))


def latest_images(rows, key):
    latest = {}
    for row in sorted((r for r in rows if r["_operation"] != 3), key=order):
        latest[tuple(row[k] for k in key)] = row
    return {k: image(r) for k, r in latest.items() if r["_operation"] != 1}


def check_chunked(tmp_path, db, name, ci, generation=0):
    """Every promise of a chunked snapshot, for one table of the run `name` (of a generation's
    re-snapshot when `generation` > 0)."""
    key = KEYS[ci]
    app_id = f"{ci}-{name}" + (f".g{generation}" if generation else "")
    bronze_path = tmp_path / "lake" / name / ci
    facts = [r for r in DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
             if r["app_id"] == app_id]
    opened = [r for r in facts if r["event"] == "snapshot_open"]
    assert len(opened) == 1 and json.loads(opened[0]["detail"])["mode"] == "chunked", opened
    s = opened[0]["max_lsn"]
    done = [r for r in facts if r["event"] == ("resnapshot" if generation else "bootstrap")]
    assert len(done) == 1 and done[0]["max_lsn"] == s, done
    # This snapshot's rows and the changes after it (before a re-snapshot, older generations').
    bronze = [r for r in DeltaTable(str(bronze_path)).to_pyarrow_table().to_pylist()
              if (r["_operation"] == 0 and r["_snapshot"] == s) or (r["_operation"] != 0 and r["_start_lsn"] > s)]

    # The plan beside bronze: chunks that tile the key space, the first open below.
    plan = planned_chunks(DeltaTable(str(tmp_path / "lake" / name / f"{ci}_snapshot_plans")).to_pyarrow_table()
                          .to_pylist(), s)
    assert len(plan) >= 3 and plan[0][1] is None, plan
    assert all(plan[i][1] == plan[i - 1][2] for i in range(1, len(plan)))
    chunk_facts = [r for r in facts if r["event"] == "snapshot_chunk"]
    assert sorted(json.loads(r["detail"])["chunk"] for r in chunk_facts) == list(range(len(plan)))
    # Stamps are taken before each wave's read and are never below S.
    assert all(r["min_lsn"] >= s for r in chunk_facts)

    snapshot_rows = [r for r in bronze if r["_operation"] == 0]
    assert all(r["_snapshot"] == s and r["_chunk"] is not None and r["_start_lsn"] >= s for r in snapshot_rows)
    per_chunk = collections.Counter(r["_chunk"] for r in snapshot_rows)
    assert {json.loads(r["detail"])["chunk"]: r["rows"] for r in chunk_facts} == \
        {c: per_chunk.get(c, 0) for c in range(len(plan))}
    # Each key once in the snapshot.
    dup = [k for k, n in collections.Counter(tuple(r[c] for c in key) for r in snapshot_rows).items() if n > 1]
    assert not dup, dup[:5]

    # Every change after S once, and nothing of before.
    changes = [r for r in bronze if r["_operation"] != 0]
    after_s = sorted(k for k in change_table_keys(db, ci) if k[0] > s)
    assert sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in changes) == after_s

    # No chunk row older than its stamp: the key's last change at or before the stamp is the
    # image read, or a later change's (a row may be newer than its stamp, never older).
    by_key = collections.defaultdict(list)
    for r in sorted(changes, key=order):
        if r["_operation"] != 3:
            by_key[tuple(r[c] for c in key)].append(r)
    for row in snapshot_rows:
        history = by_key.get(tuple(row[c] for c in key), [])
        before = [i for i, c in enumerate(history) if c["_start_lsn"] <= row["_start_lsn"]]
        if not before:
            continue
        allowed = {image(c) for c in history[before[-1]:] if c["_operation"] != 1}
        assert image(row) in allowed, (ci, row, history)
    return s


def check_against_full(tmp_path, name, full_name, since=None):
    """Latest images per key of bronze `name` (from the snapshot at LSN since[ci] on, when given)
    equal those of a full snapshot's bronze `full_name` taken after."""
    for ci in TABLES:
        key = KEYS[ci]
        ours = DeltaTable(str(tmp_path / "lake" / name / ci)).to_pyarrow_table().to_pylist()
        if since:
            ours = [r for r in ours if (r["_operation"] == 0 and r["_snapshot"] == since[ci]) or
                    (r["_operation"] != 0 and r["_start_lsn"] > since[ci])]
        full = DeltaTable(str(tmp_path / "lake" / full_name / ci)).to_pyarrow_table().to_pylist()
        assert latest_images(ours, key) == latest_images(full, key), ci


def writer(db, seed):
    return subprocess.Popen([BINARY, "sim", "workload", "--db", str(db), "--tps", "120", "--duration", "300",
                             "--statements", "3", "--seed", str(seed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def stop(process):
    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def silver_images(tmp_path, ci):
    """Silver's rows of `ci` as the images latest_images gives (captured columns only)."""
    rows = DeltaTable(str(tmp_path / "lake" / "silver" / ci)).to_pyarrow_table().to_pylist()
    return {tuple(r[c] for c in KEYS[ci]): image(r) for r in rows}


def t10(cli, tmp_path, source, backend):
    db = tmp_path / "shop.sim"
    running = write_pipeline(tmp_path, "chunked", "processingTime=200 ms", source, backend, "chunked", silver=True)
    workload = writer(db, 11)
    try:
        time.sleep(0.5)
        run = subprocess.Popen([BINARY, "run", "--json", str(running)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        time.sleep(6)
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
        assert run.returncode == 0, stderr
    finally:
        stop(workload)
    # Silver took the waves as they came; its verdict is held while the snapshot is open.
    control = {r["table_name"]: r for r in DeltaTable(str(tmp_path / "lake" / "ops" / "control")).to_pyarrow_table().to_pylist()}
    for ci in TABLES:
        row = control.get(str(tmp_path / "lake" / "silver" / ci))
        assert row is not None and row["applied_lsn"] is not None, ci
        if row["open_snapshot_lsn"] is not None:
            assert row["snapshot_wave"] is not None and row["finalized_until"] is None, row
    # The rest: the stream and the backfill to the end, then a full snapshot to compare with.
    final_pipeline = write_pipeline(tmp_path, "chunked", "availableNow", source, backend, "chunked", silver=True)
    final = cli("run", "--json", final_pipeline)
    assert json.loads(final.stdout.splitlines()[-1])["failed"] == []
    cli("apply-changes", final_pipeline)  # the waves the backfill wrote after the stream's last batch
    # Reconcile: every bucket matches, every row compared, and the chunks pass their checks.
    done = cli("reconcile", final_pipeline, "--bucket-rows", 40, "--sample", 1, "--seed", 1).stdout
    for ci in TABLES:
        line = next(l for l in done.splitlines() if l.split(":")[0].endswith(ci))
        assert " 0 in flight, 0 mismatch" in line and ";" not in line, line
    cli("run", write_pipeline(tmp_path, "full", "availableNow", source, backend, "full"))
    for ci in TABLES:
        full = DeltaTable(str(tmp_path / "lake" / "full" / ci)).to_pyarrow_table().to_pylist()
        assert silver_images(tmp_path, ci) == latest_images(full, KEYS[ci]), ci
    waves_after_s = 0
    for ci in TABLES:
        check_chunked(tmp_path, db, "chunked", ci)
        facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
        stamps = {r["min_lsn"] for r in facts if r["event"] == "snapshot_chunk" and r["app_id"] == f"{ci}-chunked"}
        waves_after_s += len(stamps) > 1
    # The waves ran while the writer wrote: their stamps moved on from S.
    assert waves_after_s == len(TABLES)
    check_against_full(tmp_path, "chunked", "full")


def test_a_chunked_snapshot_next_to_a_running_stream_under_a_writer(cli, tmp_path):
    make_db(cli, tmp_path)
    t10(cli, tmp_path, 'simPath = "shop.sim"', "sim")


def test_a_chunked_snapshot_through_odbc_from_sim_serve(cli, tmp_path):
    db = make_db(cli, tmp_path)
    server = SimServer(db)
    try:
        t10(cli, tmp_path, odbc_source(cli, db, server), "odbc")
    finally:
        os.environ.pop("MSSQL_CDC_CHUNKED_PASSWORD", None)
        server.stop()


@pytest.mark.sigkill
def test_sigkill_during_waves_12_times_ends_equal_to_the_source(cli, tmp_path):
    seed = int(os.environ.get("MSSQL_CDC_CRASH_SEED", random.randrange(1 << 30)))
    print(f"kill schedule seed {seed} (MSSQL_CDC_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    db = make_db(cli, tmp_path)
    # More rows, in smaller chunks: a kill lands in a wave most of the time.
    cli("sim", "workload", "--db", db, "--tps", 1000, "--transactions", 1500, "--seed", 4, "--statements", 3,
        "--mix", "insert=1")
    source = 'simPath = "shop.sim"'
    running = write_pipeline(tmp_path, "chunked", "processingTime=100 ms", source, "sim", "chunked")
    running.write_text(running.read_text().replace("chunk_rows = 40", "chunk_rows = 15"))
    workload = writer(db, seed)
    exits = collections.Counter()
    try:
        for _ in range(12):
            exits[run_then_kill(running, rng, high=1.2)] += 1
        assert exits[-signal.SIGKILL] >= 6, exits
    finally:
        stop(workload)
    final = write_pipeline(tmp_path, "chunked", "availableNow", source, "sim", "chunked")
    final.write_text(final.read_text().replace("chunk_rows = 40", "chunk_rows = 15"))
    summary = json.loads(cli("run", "--json", final).stdout.splitlines()[-1])
    assert summary["failed"] == []
    cli("run", write_pipeline(tmp_path, "full", "availableNow", source, "sim", "full"))
    for ci in TABLES:
        check_chunked(tmp_path, db, "chunked", ci)
        # A kill mid-wave leaves data files no commit names; the next run deletes them.
        table_dir = tmp_path / "lake" / "chunked" / ci
        named = {os.path.basename(f) for f in DeltaTable(str(table_dir)).file_uris()}
        assert {p.name for p in table_dir.glob("*.parquet")} == named, ci
    check_against_full(tmp_path, "chunked", "full")


def test_status_shows_an_open_snapshots_progress_and_availablenow_leaves_a_waiting_backfill(cli, tmp_path):
    make_db(cli, tmp_path)
    source = 'simPath = "shop.sim"'
    waiting = write_pipeline(tmp_path, "chunked", "availableNow", source, "sim", "chunked")
    # Headroom no stream has: the backfill plans, then waits; availableNow ends all the same.
    waiting.write_text(waiting.read_text() + "min_headroom_hours = 1000000\n")
    summary = json.loads(cli("run", "--json", waiting).stdout.splitlines()[-1])
    assert summary["failed"] == []
    status = json.loads(cli("status", "--json", waiting, check=False).stdout)
    for table in status["tables"]:
        progress = table["open_snapshot"]
        assert progress["chunks_done"] == 0 and progress["chunks_total"] >= 3, progress
    text = cli("status", waiting, check=False).stdout
    assert "chunked snapshot at LSN 0x" in text and "0 of " in text, text

    done = write_pipeline(tmp_path, "chunked", "availableNow", source, "sim", "chunked")
    cli("run", done)
    status = json.loads(cli("status", "--json", done, check=False).stdout)
    assert [t["open_snapshot"] for t in status["tables"]] == [None] * len(TABLES)
    for ci in TABLES:
        check_chunked(tmp_path, tmp_path / "shop.sim", "chunked", ci)


@pytest.mark.parametrize("backend", ["sim", "odbc"])
def test_t10_resnapshot_a_purged_gap_gives_a_chunked_resnapshot_in_generation_1(cli, tmp_path, backend):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 400, "--seed", 3, "--statements", 3)
    server = SimServer(db) if backend == "odbc" else None
    try:
        source = odbc_source(cli, db, server) if server else 'simPath = "shop.sim"'
        pipeline = write_pipeline(tmp_path, "chunked", "availableNow", source, backend, "chunked")
        pipeline.write_text(pipeline.read_text().replace("bootstrap = true", 'bootstrap = true\non_data_loss = "resnapshot"'))
        cli("run", pipeline)
        # Changes, two hours, cleanup keeping the last hour (a gap the stream never read), changes.
        cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 60, "--seed", 4, "--statements", 3)
        cli("sim", "clock", "--db", db, "--advance", 7200)
        cli("sim", "idle", "--db", db)
        cli("sim", "cleanup", "--db", db, "--retention-minutes", 60)
        cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 60, "--seed", 5, "--statements", 3)
        result = cli("run", "--json", pipeline)
        assert json.loads(result.stdout.splitlines()[-1])["failed"] == []
        assert "snapshotting the table again as generation 1" in result.stdout + result.stderr
        cli("run", write_pipeline(tmp_path, "full", "availableNow", source, backend, "full"))
    finally:
        os.environ.pop("MSSQL_CDC_CHUNKED_PASSWORD", None)
        if server:
            server.stop()
    since = {}
    for ci in TABLES:
        state = json.loads((tmp_path / "checkpoints" / "chunked" / ci / "_mssql_cdc_generation.json").read_text())
        assert state["generation"] == 1, state
        since[ci] = check_chunked(tmp_path, db, "chunked", ci, generation=1)
        assert since[ci] == state["snapshot_lsn"]
        facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
        (row,) = [r for r in facts if r["event"] == "resnapshot" and r["app_id"] == f"{ci}-chunked.g1"]
        assert row["lost_from_ts"] is not None and row["lost_to_ts"] > row["lost_from_ts"]
    check_against_full(tmp_path, "chunked", "full", since)
