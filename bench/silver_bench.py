"""apply_changes side by side: the native engine (build/bench/silver_apply_bench), our package on
Spark, and the reference library mssql-cdc-pyspark 0.8.0 (a black box, through its public API),
each applying the same changes onto a silver table of the same bronze.

The data, built once into --dir/silver_bench and kept: a bronze table holding a snapshot of
--rows rows (id bigint key, qty int, name string of 24, amount decimal(18,2); written with
delta-rs), and --changes change rows after it, in commits of 1,000: 60% updates (before- and
after-image rows), 20% deletes, 20% inserts of new keys, the keys of the updates and deletes
spread uniformly over the whole key range (the case where copy on write rewrites every file).

Each run starts from a copy of the snapshot-only bronze: apply_changes rebuilds silver from the
snapshot (reported, and the Spark runs' warm-up), the changes are appended to bronze, and
apply_changes applies them (the timed figure). Spark runs get a fresh local[2] Spark with 2g of
driver memory each (bench/silver_bench_child.py); their peak memory is the resident memory of
the child's whole process tree (driver Python and JVM), sampled every 0.2 s. The native run
reports its own peak (VmHWM). Silver's row count is checked against the expected one.

    .venv/bin/python bench/silver_bench.py [--rows 10000000] [--changes 100000] [--dir bench/out]
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import spark_bench  # noqa: E402  (the reference's venv and the Delta jars)

SNAPSHOT_LSN = "0x" + "0" * 18 + "10"
PAGE = os.sysconf("SC_PAGE_SIZE")


def log(msg):
    print(f"silver_bench: {msg}", file=sys.stderr, flush=True)


def lsn(n):
    return f"0x{n:020X}"


def schema():
    return pa.schema([
        ("_capture_instance", pa.string()), ("_start_lsn", pa.string()), ("_seqval", pa.string()),
        ("_operation", pa.int32()), ("_command_id", pa.int32()), ("_commit_ts", pa.timestamp("us")),
        ("id", pa.int64()), ("qty", pa.int32()), ("name", pa.string()), ("amount", pa.decimal128(18, 2)),
        ("_batch_id", pa.int32()), ("_snapshot", pa.string()), ("_chunk", pa.int32()),
    ])


def rows_batch(ids, ops, lsns, seqvals, snapshot):
    n = len(ids)
    return pa.record_batch([
        pa.array(["dbo_bench"] * n), pa.array(lsns), pa.array(seqvals, pa.string()),
        pa.array(ops, pa.int32()), pa.array([None if snapshot else 1] * n, pa.int32()),
        pa.array([1_700_000_000_000_000] * n, pa.timestamp("us")),
        pa.array(ids, pa.int64()), pa.array([i % 1000 for i in ids], pa.int32()),
        pa.array([f"name-{i:019d}" for i in ids]),
        pa.array([Decimal(i % 100000) / 100 for i in ids], pa.decimal128(18, 2)),
        pa.array([None] * n, pa.int32()), pa.array([SNAPSHOT_LSN if snapshot else None] * n),
        pa.array([None] * n, pa.int32()),
    ], schema=schema())


def build(data, rows, changes):
    base, changes_file = data / "bronze", data / "changes.parquet"
    stamp = data / "built.json"
    want = {"rows": rows, "changes": changes}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return base, changes_file, json.loads((data / "expected.json").read_text())["rows"]
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    log(f"building a bronze snapshot of {rows:,} rows")

    def snapshot_batches():
        step = 500_000
        for first in range(0, rows, step):
            ids = list(range(first, min(rows, first + step)))
            yield rows_batch(ids, [0] * len(ids), [SNAPSHOT_LSN] * len(ids), [None] * len(ids), True)

    write_deltalake(str(base), pa.RecordBatchReader.from_batches(schema(), snapshot_batches()))
    rng = random.Random(7)
    updates, deletes = int(changes * 0.6) // 2, int(changes * 0.2)
    inserts = changes - updates * 2 - deletes
    touched = rng.sample(range(rows), updates + deletes)
    entries = [(k, "u") for k in touched[:updates]] + [(k, "d") for k in touched[updates:]] + \
              [(rows + i, "i") for i in range(inserts)]
    rng.shuffle(entries)
    ids, ops, lsns, seqvals = [], [], [], []
    commit = 0x20
    for n, (key, kind) in enumerate(entries):
        if n % 1000 == 0:
            commit += 1
        seq = lsn(n + 1)
        if kind == "u":
            ids += [key, key]
            ops += [3, 4]
            lsns += [lsn(commit)] * 2
            seqvals += [seq, seq]
        else:
            ids.append(key)
            ops.append(1 if kind == "d" else 2)
            lsns.append(lsn(commit))
            seqvals.append(seq)
    pq.write_table(pa.Table.from_batches([rows_batch(ids, ops, lsns, seqvals, False)]), changes_file)
    expected = rows - deletes + inserts
    (data / "expected.json").write_text(json.dumps({"rows": expected}))
    stamp.write_text(json.dumps(want))
    return base, changes_file, expected


class TreeMemory:
    """Peak resident memory of a process and its descendants, sampled every 0.2 s."""

    def __init__(self, pid):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self):
        children = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
        out, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += children.get(pid, [])
        return out

    def _run(self):
        while not self._stop.is_set():
            total = 0
            for pid in self._tree():
                try:
                    with open(f"/proc/{pid}/statm") as f:
                        total += int(f.read().split()[1]) * PAGE
                except OSError:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.2)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak / 1e6


def fresh_bronze(base, work):
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(base, work / "bronze")
    return work / "bronze"


def run_native(base, changes_file, work):
    bronze = fresh_bronze(base, work)
    binary = ROOT / "build" / "bench" / "silver_apply_bench"
    args = [str(binary), "--bronze", str(bronze), "--silver", str(work / "silver"), "--control",
            str(work / "control"), "--key", "id", "--instance", "dbo_bench"]
    rebuild = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
    write_deltalake(str(bronze), pq.read_table(changes_file), mode="append")
    apply = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
    from deltalake import DeltaTable
    rows = DeltaTable(str(work / "silver")).to_pyarrow_dataset().count_rows()
    return {"rebuild_s": rebuild["seconds"], "apply_s": apply["seconds"], "rows": rows,
            "peak_mb": max(rebuild["peak_rss_mb"], apply["peak_rss_mb"]), "apply_peak_mb": apply["peak_rss_mb"]}


def run_spark(python, base, changes_file, work, jars):
    bronze = fresh_bronze(base, work)
    out = work / "result.json"
    cmd = [str(python), str(ROOT / "bench" / "silver_bench_child.py"), "--bronze", str(bronze), "--changes",
           str(changes_file), "--silver", str(work / "silver"), "--control", str(work / "control"), "--jars", jars,
           "--work", str(work), "--out", str(out)]
    with open(work / "child.log", "w") as child_log:
        child = subprocess.Popen(cmd, stdout=child_log, stderr=subprocess.STDOUT, env=spark_bench.clean_env(),
                                 cwd=str(work))
        memory = TreeMemory(child.pid)
        code = child.wait(timeout=3600)
        peak = memory.stop()
    if code != 0:
        raise RuntimeError(f"{cmd[0]} failed ({code}); see {work / 'child.log'}")
    result = json.loads(out.read_text())
    result["peak_mb"] = peak
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--changes", type=int, default=100_000)
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    args = parser.parse_args()
    out = Path(args.dir).resolve()
    base, changes_file, expected = build(out / "silver_bench", args.rows, args.changes)
    jars = subprocess.run(["bash", str(ROOT / "scripts" / "setup_spark.sh")], check=True, capture_output=True,
                          text=True).stdout.strip()
    ref_python = spark_bench.reference_python(out)
    ours_python = ROOT / ".venv" / "bin" / "python"
    results = {}
    for name, run in (("native", lambda w: run_native(base, changes_file, w)),
                      ("ours on Spark", lambda w: run_spark(ours_python, base, changes_file, w, jars)),
                      ("reference 0.8.0 on Spark", lambda w: run_spark(ref_python, base, changes_file, w, jars))):
        log(f"running {name}")
        work = out / "silver_runs" / name.split()[0]
        results[name] = run(work)
        if results[name]["rows"] != expected:
            raise RuntimeError(f"{name}: silver holds {results[name]['rows']} rows, expected {expected}")
        shutil.rmtree(work, ignore_errors=True)
    ref = results["reference 0.8.0 on Spark"]
    print(f"apply_changes of {args.changes:,} changes onto a {args.rows:,}-row silver table (keys spread over the "
          f"whole key range), silver then {expected:,} rows:")
    print()
    print("| run | rebuild from the snapshot (s) | apply the changes (s) | speed vs reference | peak RSS (MB) |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['rebuild_s']:.1f} | {r['apply_s']:.1f} | {ref['apply_s'] / r['apply_s']:.2f}x | "
              f"{r['peak_mb']:.0f} |")


if __name__ == "__main__":
    main()
