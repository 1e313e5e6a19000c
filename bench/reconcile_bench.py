"""reconcile side by side: the native engine (`mssql-cdc reconcile`), our package on Spark, and
the reference library mssql-cdc-pyspark 0.8.0 (a black box, through its public API), each
reconciling a silver table of N rows against its source table holding the same rows.

The rows are bench/bench_tables.cc's narrow shape keyed by a bigint id: ours read a simulated
database whose table was bulk-loaded (`build/bench/snapshot_bench --load-only`), the reference
its own fake backend holding the same rows (bench/snapshot_spark_bench.py builds both). Each
side first bootstraps bronze from the table and builds silver with apply_changes (untimed, and
the Spark runs' warm-up); then reconcile runs twice: Tier 1 alone (sample 0) and with the
default sample of 0.01, each timed from the call to its return, with bucket_rows 1,000,000.
Every run must report every bucket MATCH.

Spark runs get a fresh local[2] Spark with 2g of driver memory each; their peak memory is that
of the child's whole process tree (driver Python, JVM, Python workers), sampled every 0.2 s.
The native run's peak is its own (ru_maxrss).

    .venv/bin/python bench/reconcile_bench.py [--rows 10000000] [--libs native,ours,ref] [--dir bench/out]
        [--tier2-bucket]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

RUNS = ("tier1", "sampled")
SAMPLES = {"tier1": 0.0, "sampled": 0.01}


def log(msg):
    print(f"reconcile_bench: {msg}", file=sys.stderr, flush=True)


def child(args):
    """One Spark library's run: bootstrap, apply_changes, then reconcile twice; JSON to --out."""
    import spark_bench_child

    import mssql_cdc

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    spark = spark_bench_child.spark_session(args.jars, str(work))
    options = {**spark_bench_child.options_for(args.lib, args.data), "captureInstance": "bench_narrow",
               "numPartitions": "2"}
    bronze, silver, control, facts = (str(work / n) for n in ("bronze", "silver", "control", "facts"))
    mssql_cdc.stream(spark, options).to_delta(bronze, "bench", str(work / "ckpt"), facts, bootstrap=True,
                                              trigger={"availableNow": True}).awaitTermination()
    mssql_cdc.apply_changes(spark, bronze, silver, keys=["id"], control_table=control, options=options)
    runs = []
    for name in RUNS:
        sampler = spark_bench_child.Sampler()
        sampler.start()
        started = time.perf_counter()
        result = mssql_cdc.reconcile(spark, options, silver, keys=["id"], bronze=bronze, control_table=control,
                                     bucket_rows=1_000_000, sample=SAMPLES[name], seed=1)
        seconds = time.perf_counter() - started
        memory = sampler.finish()
        runs.append({"seconds": seconds, "buckets": result["buckets"], "match": result["match"],
                     "hashed": result["hashed"], "failures": dict(result["failures"]),
                     "peak_mb": (memory["total"] + memory.get("executor_py", 0)) / 2**20})
    spark.stop()
    Path(args.out).write_text(json.dumps(runs))


def native(rows, sim, out):
    work = out / "reconcile_native"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pipeline = work / "pipeline.toml"
    pipeline.write_text(f"""tables = ["bench_narrow"]
[source]
backend = "sim"
simPath = "{sim}"
sourceTimeZone = "UTC"
[stream]
target = "lake/bronze/{{ci}}"
app_id = "{{ci}}"
checkpoint = "checkpoints/{{ci}}"
facts_table = "lake/ops/facts"
control_table = "lake/ops/control"
trigger = "availableNow"
bootstrap = true
[silver]
target = "lake/silver/{{ci}}"
""")
    binary = str(ROOT / "build" / "mssql-cdc")
    log(f"native: bootstrap and silver of {rows:,} rows")
    subprocess.run([binary, "run", str(pipeline)], check=True, cwd=work, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    runs = []
    for name in RUNS:
        out_file = work / f"{name}.out"
        started = time.perf_counter()
        with open(out_file, "w") as out_stream:
            process = subprocess.Popen([binary, "reconcile", str(pipeline), "--bucket-rows", "1000000", "--sample",
                                        str(SAMPLES[name]), "--seed", "1"], cwd=work, stdout=out_stream,
                                       stderr=subprocess.STDOUT)
            # wait4 on this one process: its own peak, not the earlier children's.
            _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        peak_mb = usage.ru_maxrss / 1024
        stdout = out_file.read_text()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"native reconcile failed ({status}): {stdout}")
        line = stdout.strip().splitlines()[-1]
        buckets = int(line.split(": ")[1].split(" buckets")[0])
        match = int(line.split(" buckets, ")[1].split(" match")[0])
        hashed = int(line.split(" mismatch, ")[1].split(" compared")[0])
        runs.append({"seconds": seconds, "buckets": buckets, "match": match, "hashed": hashed, "failures": {},
                     "peak_mb": peak_mb})
    return runs


def native_tier2(rows, out):
    """Tier 2 of the native run over one bucket of every row (--bucket-rows rows, --sample 1),
    under the default memory_budget, which reads the bucket in pieces, and under one that holds
    the whole bucket at once: seconds, peak RSS and what the summary says of parts and spill, for
    the integer key (read in key ranges) and for the table's uniqueidentifier column `ref` as
    the key (no grid: split by a hash of the key into parts spilled to disk)."""
    work = out / "reconcile_native"
    pipeline = work / "pipeline.toml"
    text = pipeline.read_text()
    results = []
    for key in ("id", "ref"):
        for budget in ("256 MiB", "64 GiB"):
            variant = work / "pipeline_tier2.toml"
            keys = "" if key == "id" else f'[silver.keys]\nbench_narrow = ["{key}"]\n'
            variant.write_text(text + keys + f'[engine]\nmemory_budget = "{budget}"\nspill_directory = "{work}"\n')
            started = time.perf_counter()
            with open(work / "tier2.out", "w") as out_stream:
                process = subprocess.Popen([str(ROOT / "build" / "mssql-cdc"), "reconcile", str(variant),
                                            "--bucket-rows", str(rows), "--sample", "1"], cwd=work, stdout=out_stream,
                                           stderr=subprocess.STDOUT)
                _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - started
            stdout = (work / "tier2.out").read_text()
            if os.waitstatus_to_exitcode(status) != 0 or " 1 compared row by row" not in stdout:
                raise SystemExit(f"native Tier 2 failed ({status}): {stdout}")
            line = stdout.strip().splitlines()[-1]
            spill = line.split("compared row by row")[1].split(")")[0].lstrip(" (") if "spilled" in line else "-"
            results.append({"key": key, "budget": budget, "seconds": seconds, "peak_mb": usage.ru_maxrss / 1024,
                            "spill": spill})
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd")
    c = sub.add_parser("child")
    for name in ("--lib", "--data", "--jars", "--work", "--out"):
        c.add_argument(name, required=True)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--libs", default="native,ours,ref")
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    parser.add_argument("--tier2-bucket", action="store_true",
                        help="also time the native Tier 2 of one bucket of every row, in pieces and whole")
    args = parser.parse_args()
    if args.cmd == "child":
        return child(args)

    import snapshot_spark_bench
    import spark_bench

    out = Path(args.dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    libs = [lib for lib in ("native", "ours", "ref") if lib in args.libs.split(",")]
    results = {}
    sim = snapshot_spark_bench.sim_database(args.rows, out) if {"native", "ours"} & set(libs) else None
    tier2 = None
    if "native" in libs:
        results["native"] = native(args.rows, sim, out)
        if args.tier2_bucket:
            log(f"native: Tier 2 of one {args.rows:,}-row bucket")
            tier2 = native_tier2(args.rows, out)
    if {"ours", "ref"} & set(libs):
        jars = subprocess.run(["bash", str(ROOT / "scripts" / "setup_spark.sh")], check=True, capture_output=True,
                              text=True).stdout.strip().splitlines()[-1]
    for lib in ("ours", "ref"):
        if lib not in libs:
            continue
        python = ROOT / ".venv" / "bin" / "python"
        data = sim
        if lib == "ref":
            python = spark_bench.reference_python(out)
            data = snapshot_spark_bench.fake_table(python, args.rows, out)
        result_file, log_file = out / f"reconcile_{lib}.json", out / f"reconcile_{lib}.log"
        log(f"{lib}: Spark, {args.rows:,} rows")
        with open(log_file, "w") as f:
            code = subprocess.run([str(python), __file__, "child", "--lib", lib, "--data", str(data), "--jars", jars,
                                   "--work", str(out / f"reconcile_{lib}"), "--out", str(result_file)],
                                  env=spark_bench.clean_env(), cwd="/", stdout=f, stderr=f).returncode
        if code != 0:
            tail = log_file.read_text(errors="replace").splitlines()[-15:]
            raise SystemExit(f"{lib} failed ({code}); {log_file}:\n  " + "\n  ".join(tail))
        results[lib] = json.loads(result_file.read_text())
    for lib, runs in results.items():
        for run in runs:
            if run["match"] != run["buckets"] or run["failures"]:
                raise SystemExit(f"{lib}: not every bucket matched: {run}")
    names = {"native": "native (`mssql-cdc reconcile`)", "ours": "ours on Spark", "ref": "reference 0.8.0"}
    print(f"reconcile of a {args.rows:,}-row silver table against its source table, bucket_rows 1,000,000:")
    print()
    print("| run | Tier 1 (s) | vs reference | Tier 1 + sample 0.01 (s) | vs reference | buckets | compared | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    ref = results.get("ref")
    for lib, runs in results.items():
        t1, sampled = runs
        ratio = (lambda i: f"{ref[i]['seconds'] / runs[i]['seconds']:.2f}x" if ref else "-")
        print(f"| {names[lib]} | {t1['seconds']:.1f} | {ratio(0)} | {sampled['seconds']:.1f} | {ratio(1)} | "
              f"{t1['buckets']} | {sampled['hashed']} | {max(t1['peak_mb'], sampled['peak_mb']):.0f} |")
    if tier2:
        print()
        print(f"native Tier 2 of one bucket of {args.rows:,} rows (--bucket-rows {args.rows} --sample 1), read in "
              f"pieces under the default memory_budget and whole under one that holds it; keyed by the bigint id "
              f"(key ranges) and by the uniqueidentifier ref (parts split by hash):")
        print()
        print("| key | memory_budget | Tier 1 + Tier 2 (s) | peak RSS (MB) | parts, spilled |")
        print("|---|---|---|---|---|")
        for run in tier2:
            print(f"| {run['key']} | {run['budget']} | {run['seconds']:.1f} | {run['peak_mb']:.0f} | {run['spill']} |")


if __name__ == "__main__":
    main()
