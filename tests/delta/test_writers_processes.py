"""Several writer processes on one table, and writers killed with SIGKILL at random moments: the
table always opens in both readers and holds exactly the appends that committed."""

import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pyarrow as pa
from deltalake import DeltaTable

from delta_interop import log_commits, log_txn_versions

CHILD = Path(__file__).resolve().parent / "delta_writer_child.py"
sys.path.insert(0, str(CHILD.parent))
from delta_writer_child import SCHEMA, batch  # noqa: E402


def start_child(*args):
    return subprocess.Popen([sys.executable, str(CHILD), *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def marker_counts(table):
    """marker -> number of rows, from a pyarrow table with a marker column."""
    counts = table.group_by("marker").aggregate([("seq", "count"), ("seq", "count_distinct")])
    return {m: (n, d) for m, n, d in zip(counts["marker"].to_pylist(), counts["seq_count"].to_pylist(),
                                         counts["seq_count_distinct"].to_pylist())}


def check_complete(counts, markers, rows):
    """Exactly `markers` are in the table, each with all its rows (seq 0..rows-1, no duplicate)."""
    assert set(counts) == set(markers), (
        f"missing {sorted(set(markers) - set(counts))[:10]}, unexpected {sorted(set(counts) - set(markers))[:10]}")
    bad = {m: c for m, c in counts.items() if c != (rows, rows)}
    assert not bad, f"markers with incomplete or duplicated rows: {dict(list(bad.items())[:10])}"


def spark_marker_counts(spark, path):
    df = spark.read.format("delta").load(str(path))
    rows = df.groupBy("marker").agg({"seq": "count"}).collect()
    distinct = df.select("marker", "seq").distinct().groupBy("marker").count().collect()
    d = {r["marker"]: r["count"] for r in distinct}
    return {r["marker"]: (r["count(seq)"], d[r["marker"]]) for r in rows}


# --- two processes appending 500 times each ----------------------------------------------------

APPENDS = 500
ROWS = 3


def test_two_processes_append_500_times_each(core, spark, tmp_path):
    path = tmp_path / "contended"
    core.delta_create(str(path), SCHEMA)
    children = [start_child(path, f"writer-{w}", "--count", APPENDS, "--rows", ROWS,
                            "--marker-base", w * 1_000_000, "--wait-go") for w in range(2)]
    for c in children:
        assert c.stdout.readline().strip() == "ready", c.stderr.read()
    for c in children:  # both go at once
        c.stdin.write("go\n")
        c.stdin.flush()
    results = []
    for c in children:
        out, err = c.communicate(timeout=600)
        assert c.returncode == 0, f"writer failed: {out}\n{err}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["appends"] for r in results] == [APPENDS, APPENDS]
    attempts = sum(r["attempts"] for r in results)
    print(f"\n2 writers x {APPENDS} appends: {attempts} commit attempts ({attempts - 2 * APPENDS} retries)")
    assert attempts >= 2 * APPENDS

    markers = [w * 1_000_000 + i for w in range(2) for i in range(APPENDS)]
    # The log, read independently: 1000 commits after the create, each with exactly one txn.
    commits = log_commits(path)
    assert sorted(commits) == list(range(2 * APPENDS + 1))
    for w in range(2):
        txns = log_txn_versions(path, f"writer-{w}")
        assert sorted(txns) == list(range(APPENDS))
    assert sum(1 for acts in commits.values() for a in acts if "txn" in a) == 2 * APPENDS

    table = DeltaTable(str(path))
    assert table.version() == 2 * APPENDS
    assert table.transaction_version("writer-0") == APPENDS - 1
    assert table.transaction_version("writer-1") == APPENDS - 1
    check_complete(marker_counts(table.to_pyarrow_table(columns=["marker", "seq"])), markers, ROWS)
    check_complete(spark_marker_counts(spark, path), markers, ROWS)
    check_complete(marker_counts(pa.table(core.delta_read(str(path)))), markers, ROWS)
    snap = core.delta_snapshot(str(path))
    assert snap["app_versions"] == {"writer-0": APPENDS - 1, "writer-1": APPENDS - 1}


# --- SIGKILL at random moments -----------------------------------------------------------------

TRIALS = int(os.environ.get("MSSQL_CDC_KILL_TRIALS", "30"))
KILL_ROWS = 400
SPARK_SAMPLE = 5  # trials whose table (as it was right after the kill) Spark checks too


def committed_markers(path):
    """txn version -> commit version, per the log: the appends that committed."""
    return log_txn_versions(path, "crash")


@pytest.mark.sigkill
def test_sigkill_at_random_moments_leaves_exactly_the_committed_appends(core, spark, tmp_path):
    rng = random.Random(int(os.environ.get("MSSQL_CDC_KILL_SEED", "20261129")))
    path = tmp_path / "killed"
    core.delta_create(str(path), SCHEMA, properties={"mssql_cdc.schema_version": "1"})
    sample = set(rng.sample(range(TRIALS), min(SPARK_SAMPLE, TRIALS)))
    copies = []
    log_leftovers = set()  # files in _delta_log that are no commit, checkpoint or _last_checkpoint
    orphans = set()  # data files no commit names: written by an append the kill cut short
    trials_with_new_orphans = 0
    for trial in range(TRIALS):
        before = committed_markers(path)
        child = start_child(path, "crash", "--rows", KILL_ROWS, "--resume")
        line = child.stdout.readline().strip()
        assert line == "ready", f"trial {trial}: child said {line!r}: {child.stderr.read()}"
        # The kill comes after a random number of the child's appends (0: before its first) and
        # a random moment into the next, counted from its commits rather than the clock, so that
        # a loaded machine slows the child without leaving every kill before its first append.
        wait_for = len(before) + rng.choice([0, 1, 1, 2, 3])
        deadline = time.monotonic() + 60
        while len(committed_markers(path)) < wait_for and time.monotonic() < deadline:
            assert child.poll() is None, f"trial {trial}: the child ended: {child.stderr.read()}"
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.03))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL

        committed = committed_markers(path)
        markers = set(committed)
        # The restarted writer replays the last version and continues: no gap, nothing lost.
        assert markers == set(range(len(markers))), f"trial {trial}: txn versions {sorted(markers)[-5:]}"
        assert len(markers) >= len(before)
        last = max(markers) if markers else None
        for f in (path / "_delta_log").iterdir():
            name = f.name
            if not (name.endswith(".json") and name[:20].isdigit()) and not name.endswith(".checkpoint.parquet") \
                    and name != "_last_checkpoint":
                log_leftovers.add(name)
        referenced = {a["add"]["path"] for acts in log_commits(path).values() for a in acts if "add" in a}
        now = {f.name for f in path.glob("*.parquet") if f.name not in referenced}
        trials_with_new_orphans += bool(now - orphans)
        orphans |= now

        table = DeltaTable(str(path))
        assert table.transaction_version("crash") == last
        check_complete(marker_counts(table.to_pyarrow_table(columns=["marker", "seq"])), markers, KILL_ROWS)
        snap = core.delta_snapshot(str(path))
        assert snap["version"] == table.version()
        assert snap["app_versions"].get("crash") == last
        check_complete(marker_counts(pa.table(core.delta_read(str(path)))), markers, KILL_ROWS)
        if last is not None:  # a replay of the last committed append writes nothing
            replay = core.delta_append(str(path), batch(last, KILL_ROWS, "crash"), app_id="crash", version=last)
            assert not replay["written"] and replay["version"] == committed[last]
        if trial in sample:
            copy = tmp_path / f"trial-{trial}"
            shutil.copytree(path, copy)
            copies.append((copy, markers))

    final = committed_markers(path)
    print(f"\n{TRIALS} kills: {len(final)} appends committed, table version "
          f"{DeltaTable(str(path)).version()}; trials that left unreferenced data files: "
          f"{trials_with_new_orphans} ({len(orphans)} files); files left in _delta_log: {len(log_leftovers)} "
          f"(suffixes {dict(collections.Counter(n.rsplit('.', 1)[-1] for n in log_leftovers))})")
    assert len(final) > TRIALS  # the writers got somewhere between kills
    for copy, markers in copies + [(path, set(final))]:
        check_complete(spark_marker_counts(spark, copy), markers, KILL_ROWS)
