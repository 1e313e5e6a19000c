"""Full snapshots on Spark next to the reference library: our `stream(...).snapshot(target)`
(the engine plans key ranges, Spark's tasks read them) and mssql-cdc-pyspark 0.8.0's
`snapshot(target)` through its own fake backend (a black box, its public API only), on the same
rows: bench/bench_tables.cc's narrow shape, N rows.

Ours reads a simulated database whose table was bulk-loaded before CDC was enabled
(`build/bench/snapshot_bench --load-only`); the reference reads its fake backend holding the
same rows as insert changes in commits of 10,000, keyed by id so that it keeps the table. Each
library runs in a process of its own with a fresh local[2] Spark (bench/spark_bench_child.py's
session, driver memory 2g), numPartitions 2, warmed by a snapshot of a 1,000-row table; then two snapshots of the table,
each timed from the call to its return and its rows counted after: the first of its size in the
session, and the second, with the JVM's write path compiled; then a chunked snapshot (to_delta
with snapshot="chunked", then backfill() with chunks of 250,000 rows until done). Memory: the
peak over the run of the driver JVM's and the driver Python's growth plus the driver-side
Python processes Spark starts, sampled every 0.2 s (spark_bench_child.Sampler), and the
executors' Python workers apart.

    .venv/bin/python bench/snapshot_spark_bench.py [--rows 10000000] [--dir bench/out]
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import spark_bench  # noqa: E402  (the reference's venv, the fake builder, the jars)
import spark_bench_child  # noqa: E402  (the Spark session and the memory sampler)

WARM_ROWS = 1000

RUNS = ("first", "second", "bootstrap", "chunked")


def chunk_rows_for(rows):
    """backfill's default of 1,000,000 rows a chunk; four chunks for a table smaller than 4,000,000
    rows (two waves of two at numPartitions 2, as a big table's backfill goes)."""
    return min(1_000_000, max(1, rows // 4))


# The capture instance of each table of build/bench/snapshot_bench (bench_tables.h).
CAPTURE_INSTANCES = {"narrow": "bench_narrow", "wide": "bench_snapshot_wide"}


def sim_database(rows, out, table="narrow"):
    subprocess.run([str(ROOT / "build" / "bench" / "snapshot_bench"), "--rows", str(rows), "--dir", str(out),
                    "--load-only"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out / f"snapshot_{table}_{rows}.sim"


def gen_fake(args):
    """The reference's fake backend with the narrow table's N rows as insert changes, keyed by id
    so that the fake keeps the table's rows (which its snapshot reads)."""
    import shutil

    from mssql_cdc.fake import FakeCdcDatabase

    building = args.path + ".building"
    shutil.rmtree(building, ignore_errors=True)
    ci = "bench_narrow"
    db = FakeCdcDatabase(building, [ci], keys={ci: "id"}, columns={ci: spark_bench_child.FAKE_COLUMNS})
    # The fake rewrites its whole table file on every commit: about ten commits keep the build
    # linear in the rows (10,000 rows a commit would take hours at 10,000,000 rows).
    per_commit = max(spark_bench_child.PER_COMMIT, -(-args.rows // 10))
    for first in range(1, args.rows + 1, per_commit):
        rows = [(2, spark_bench_child.narrow_row(i))
                for i in range(first, min(args.rows + 1, first + per_commit))]
        for _, r in rows:
            r["created"] = r["created"][:26] + "+00:00"  # the fake's timestamps take microseconds
        db.commit(ci, rows)
    os.rename(building, args.path)


def fake_table(ref_python, rows, out):
    path = out / f"fake_table_{rows}"
    if not path.exists():
        spark_bench.log(f"building {path} ({rows} rows, the reference's fake backend)")
        subprocess.run([str(ref_python), __file__, "gen-fake", "--path", str(path), "--rows", str(rows)],
                       check=True, env=spark_bench.clean_env(), cwd="/")
    return path


def child(args):
    """One library's run: warm-up, then the timed snapshot; the result as JSON to --out."""
    import mssql_cdc

    import shutil

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)  # a target holding a snapshot would be found, not read
    spark = spark_bench_child.spark_session(args.jars, str(work))
    base = {"numPartitions": "2", "captureInstance": args.ci}

    def options(data):
        return {**spark_bench_child.options_for(args.lib, data), **base}

    # Warm-up on a small table; then the table twice: the first snapshot of this size in the
    # session (the JVM compiling the write path as it goes), and the same again. Then the two
    # ways a stream starts from a snapshot: the full bootstrap (what chunked is measured against,
    # as the reference measures its own) and the chunked one.
    mssql_cdc.stream(spark, options(args.warm)).snapshot(str(work / "warm"))
    runs = []
    for target in RUNS:
        sampler = spark_bench_child.Sampler()
        sampler.start()
        start = time.perf_counter()
        cdc = mssql_cdc.stream(spark, options(args.data))
        if target == "bootstrap":
            cdc.to_delta(str(work / target), "bench-full", str(work / "ckpt-full"), str(work / "facts"),
                         bootstrap=True, trigger={"availableNow": True}).awaitTermination()
        elif target == "chunked":
            # Opened by the stream's bootstrap, then backfill() called until done.
            app, facts = "bench-chunked", str(work / "facts")
            cdc.to_delta(str(work / target), app, str(work / "ckpt"), facts, bootstrap=True, snapshot="chunked",
                         trigger={"availableNow": True}).awaitTermination()
            while cdc.backfill(str(work / target), app_id=app, facts_table=facts,
                               chunk_rows=int(args.chunk_rows))["state"] != "done":
                pass
        else:
            cdc.snapshot(str(work / target))
        seconds = time.perf_counter() - start
        memory = sampler.finish()
        rows = spark.read.format("delta").load(str(work / target)).count()
        runs.append({"seconds": seconds, "rows": rows, "peak_mb": memory["total"] / 2**20,
                     "executor_py_mb": memory["executor_py"] / 2**20})
    spark.stop()
    Path(args.out).write_text(json.dumps(runs))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd")
    g = sub.add_parser("gen-fake")
    g.add_argument("--path", required=True)
    g.add_argument("--rows", type=int, required=True)
    c = sub.add_parser("child")
    for name in ("--lib", "--data", "--warm", "--jars", "--work", "--out", "--chunk-rows", "--ci"):
        c.add_argument(name, required=True)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--dir", default="bench/out")
    parser.add_argument("--table", choices=sorted(CAPTURE_INSTANCES), default="narrow",
                        help="the narrow table, or the wide one with two (max) columns (ours alone: the "
                             "reference's fake backend is built with the narrow table's columns)")
    parser.add_argument("--libs", default="ours,ref",
                        help="which libraries run: ours, ref or both (the reference's fake backend holds "
                             "the whole table in each Python worker: 10,000,000 rows take over 11 GB each)")
    args = parser.parse_args()
    if args.cmd == "child":
        return child(args)
    if args.cmd == "gen-fake":
        return gen_fake(args)

    out = Path(args.dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    ref_python = spark_bench.reference_python(out)
    jars = subprocess.run(["bash", str(ROOT / "scripts" / "setup_spark.sh")], check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-1]
    libs = [lib for lib in ("ours", "ref") if lib in args.libs.split(",")]
    if not libs:
        raise SystemExit("--libs: name ours, ref or both (ours,ref)")
    if args.table != "narrow" and "ref" in libs:
        raise SystemExit(f"--table {args.table}: the reference's fake backend holds the narrow table only; "
                         "add --libs ours")
    data = {"ours": lambda: (sim_database(args.rows, out, args.table), sim_database(WARM_ROWS, out, args.table)),
            "ref": lambda: (fake_table(ref_python, args.rows, out), fake_table(ref_python, WARM_ROWS, out))}
    data = {lib: data[lib]() for lib in libs}
    pythons = {"ours": ROOT / ".venv" / "bin" / "python", "ref": ref_python}
    results = {}
    for lib in libs:
        result_file = out / f"snapshot_spark_{lib}.json"
        log_file = out / f"snapshot_spark_{lib}.log"
        with open(log_file, "w") as log:
            subprocess.run([str(pythons[lib]), __file__, "child", "--lib", lib, "--data", str(data[lib][0]),
                            "--warm", str(data[lib][1]), "--jars", str(jars), "--work",
                            str(out / f"snapshot_spark_{lib}"), "--out", str(result_file),
                            "--chunk-rows", str(chunk_rows_for(args.rows)),
                            "--ci", CAPTURE_INSTANCES[args.table] if lib == "ours" else "bench_narrow"],
                           check=True, env=spark_bench.clean_env(), cwd="/", stdout=log, stderr=log)
        results[lib] = json.loads(result_file.read_text())
        for run in results[lib]:
            if run["rows"] != args.rows:
                raise SystemExit(f"{lib}: the snapshot wrote {run['rows']} rows, expected {args.rows}")
    print("| library | table | run | rows | seconds | rows/s | driver peak MB | executor Python MB |")
    print("|---|---|---|---|---|---|---|---|")
    names = {"ours": "mssql_cdc (ours)", "ref": "mssql-cdc-pyspark 0.8.0"}
    for lib in libs:
        for label, r in zip(RUNS, results[lib]):
            print(f"| {names[lib]} | {args.table} | {label} | {r['rows']} | {r['seconds']:.1f} | {r['rows'] / r['seconds']:.0f} | "
                  f"{r['peak_mb']:.0f} | {r['executor_py_mb']:.0f} |")
    for lib in libs:
        runs = dict(zip(RUNS, results[lib]))
        print(f"Chunked, {'ours' if lib == 'ours' else 'the reference'}: "
              f"{runs['chunked']['seconds'] / runs['bootstrap']['seconds']:.2f}x the full bootstrap's wall "
              f"time, {runs['chunked']['seconds'] / runs['second']['seconds']:.2f}x the second snapshot()'s "
              "(goal for ours: at most 1.2x).")
    if libs != ["ours", "ref"]:
        return
    for index, label in ((0, "first"), (1, "second")):
        ratio = results["ref"][index]["seconds"] / results["ours"][index]["seconds"]
        print(f"\n{label.capitalize()} snapshot: ours is {ratio:.1f}x the reference's rows/s (goal: at least 3x).")
    print(f"Chunked: ours is {results['ref'][3]['seconds'] / results['ours'][3]['seconds']:.1f}x the reference's rows/s.")


if __name__ == "__main__":
    main()
