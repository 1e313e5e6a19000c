"""What a running stream costs the Spark driver: 1, 10 and 50 always-on streams of our package
(`start_many`, processingTime 5 seconds; each table holds a small backlog its first batch
reads), in turn in one warmed local[2] Spark (bench/spark_bench_child.py --hold-run), each count
kept running for --hold seconds and stopped before the next starts. One Spark for all counts
pays its start once; the JVM's growth of a count is over what the counts before it left.

Reported per run: how long start_many took, how many streams failed (to start or while
running), and the peak driver memory (the driver JVM's and driver Python's growth, plus the
Python processes Spark starts on the driver for the queries: one streaming source runner per
query), with its share per stream. This is the ceiling docs/spark.md gives ("How many streams
per driver").

    .venv/bin/python bench/spark_streams_bench.py [--streams 1,10,50] [--hold 30] [--dir bench/out]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spark_bench import CHILD, OURS_PYTHON, ROOT, build_sim, clean_env, log  # noqa: E402

ROWS = 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1,10,50")
    parser.add_argument("--hold", type=float, default=30)
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    args = parser.parse_args()
    counts = [int(n) for n in args.streams.split(",")]
    data = Path(args.dir).resolve() / "spark_bench"
    work = data / "work"
    logs = data / "logs"
    for d in (data, work, logs):
        d.mkdir(parents=True, exist_ok=True)
    jars = subprocess.run(["bash", str(ROOT / "scripts" / "setup_spark.sh")], check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-1]
    warm = build_sim(data / "sim_1x1000.sim", 1, 1000)
    print(f"Always-on streams of `mssql_cdc` on one local[2] Spark driver (classic session, paths, "
          f"processingTime 5 seconds, a facts table), each table a backlog of {ROWS:,} changes, kept "
          f"running {args.hold:.0f} s; the counts run in turn in one Spark (JVM growth: over what the "
          f"counts before left). Driver memory: peak growth of the driver JVM and driver Python plus "
          f"the queries' driver-side Python processes (one streaming source runner per query), by their "
          f"resident memory (RSS, shared libraries counted in every process) and by their private "
          f"memory (what one more process costs).")
    print()
    print("| streams | start_many s | failed | query processes | peak driver memory MB (RSS) | per stream | "
          "the same, private memory MB | per stream | JVM growth MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    dbs = {n: build_sim(data / f"sim_{n}x{ROWS}.sim", n, ROWS) for n in counts}
    out = work / "streams.json"
    out.unlink(missing_ok=True)
    cmd = [str(OURS_PYTHON), str(CHILD), "run", "--lib", "ours", "--warm", str(warm), "--jars", jars,
           "--work", str(work / "streams"), "--out", str(out), "--hold", str(args.hold)]
    for n in counts:
        cmd += ["--hold-run", str(n), str(dbs[n])]
    log(f"{args.streams} always-on streams, in turn")
    t = time.perf_counter()
    with open(logs / "streams.log", "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=clean_env(), cwd="/", timeout=3600)
    log(f"  process {time.perf_counter() - t:.0f} s")
    holds = json.loads(out.read_text())["holds"] if out.exists() else {}
    for n in counts:
        r = holds.get(str(n))
        if r is None:
            print(f"| {n} | run failed (log {logs / 'streams.log'}) | | | | |")
            continue
        m = r["memory"]
        failed = len(r["failed"]) + (n - r["started"] if r["start_error"] else 0)
        print(f"| {n} | {r['start_s']:.1f} | {failed} | {m['driver_py_count']} | {m['total'] / 2**20:.0f} | "
              f"{m['total'] / 2**20 / n:.0f} | {m['total_private'] / 2**20:.0f} | "
              f"{m['total_private'] / 2**20 / n:.0f} | {m['jvm_delta'] / 2**20:.0f} |", flush=True)
        if r["start_error"]:
            print(f"\nstart_many with {n} streams raised: {r['start_error']}\n")


if __name__ == "__main__":
    main()
