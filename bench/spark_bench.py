"""Spark mode next to the reference library: our `mssql_cdc` (Spark data source over the C++ core)
and mssql-cdc-pyspark 0.8.0 from PyPI (used as a black box, through its public API only), each
streaming CDC changes into Delta on the same local Spark.

Scenarios, the same rows for both (bench/bench_tables.cc's narrow shape: bigint, int, bigint, a
24-character string, decimal(18,2), timestamp, bit, float, date, a GUID; insert changes in
commits of 10,000):

- single: one table with a backlog of --rows changes: `stream(...).to_delta(..., facts_table,
  trigger={"availableNow": True})`;
- many: --tables tables of --many-rows changes each: `start_many(..., facts_table=...,
  trigger={"availableNow": True})` then `await_all`.

Ours reads a simulated database (`mssql-cdc sim`, backend `sim`); the reference reads its own fake
backend (`mssql_cdc.fake.FakeCdcDatabase`, backend `fake`). With --wire both read the same simulated
database over TDS from `mssql-cdc sim serve` (plaintext), each through its default reader: ours
the engine's own TDS reader (backend odbc), the reference its mssql-python backend (Microsoft ODBC
Driver 18), which is the same work on the same wire. Both packages are named `mssql_cdc`,
so each run is a process of its own (bench/spark_bench_child.py) with its library's Python: ours
is .venv's, the reference's is .venv-reference, made by scripts/setup_reference.sh from
scripts/requirements-reference.txt. Every run gets a fresh local[2] Spark with the Delta jars of
scripts/setup_spark.sh and the session settings of tests/delta/conftest.py (driver memory 2g),
warmed by one small stream of the same library; then each scenario in turn (single, then many,
in the same Spark: a Spark's start and warm-up are paid once per run) is timed from the first
start to the last query's end. The many scenario's memory is growth over what the single one
left. Bronze row counts are checked against the changes written.

Driver memory is sampled every 0.2 s from /proc: the driver JVM's RSS growth, the driver
Python's RSS growth (foreachBatch runs there), and the RSS of the Python processes the JVM
starts on the driver for the queries (a streaming source runner per query, planners); the peak
of the sum is reported, and that peak over the number of streams. Executor Python workers are
left out (on a cluster they are not on the driver).

Each library runs with paths and with table names (a Hive metastore in embedded Derby); ours
runs once more through a local Spark Connect server, with names. Variants alternate within a
round (the order flips every round); the medians over --rounds are reported, with the ratios
names/paths of one library and ours on Connect over the reference on a classic session. Data sets are built once into --dir/spark_bench and kept.

    .venv/bin/python bench/spark_bench.py [--rows 1000000] [--tables 10] [--many-rows 100000]
                                          [--rounds 2] [--dir bench/out] [--wire]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = ROOT / "bench" / "spark_bench_child.py"
SIM = ROOT / "build" / "mssql-cdc"
OURS_PYTHON = ROOT / ".venv" / "bin" / "python"
PER_COMMIT = 10_000
COLUMNS = ["id bigint not null", "qty int", "total bigint", "name nvarchar(50)", "amount decimal(18,2)",
           "created datetime2(7)", "active bit", "score float", "day date", "ref uniqueidentifier"]
WARM_ROWS = 1000
RUN_TIMEOUT_S = 900


def log(msg):
    print(f"spark_bench: {msg}", file=sys.stderr, flush=True)


def clean_env():
    env = dict(os.environ)
    for key in ("PYTHONPATH", "PYTHONHOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV"):
        env.pop(key, None)
    return env


# --- the reference's venv -------------------------------------------------------------------------

def reference_python(out):
    """The reference's python, in .venv-reference (scripts/setup_reference.sh makes it once)."""
    del out  # the venv is the repository's, shared with the tests
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup_reference.sh")], check=True, env=clean_env(),
                          capture_output=True, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


# --- data sets ------------------------------------------------------------------------------------

def text(i, length):
    s = "v" + str(i * 2654435761 % 1000003)
    while len(s) < length:
        s += s
    return s[:length]


def narrow_row(i):
    """bench/bench_tables.cc NarrowShape().row(i)."""
    return {"id": i, "qty": i % 1000, "total": i * 7, "name": text(i, 24),
            "amount": f"{i % 100000}.{10 + i % 90}", "created": "2026-01-01 00:00:00.1234567",
            "active": i % 2, "score": i / 7.0, "day": "2026-03-15",
            "ref": "%08X-0000-4000-8000-%012X" % (i & 0xFFFFFFFF, i)}


def sim(*args):
    subprocess.run([str(SIM), "sim", *args], check=True, stdout=subprocess.DEVNULL)


def build_sim(path, tables, rows):
    """A simulated database (manual clock) with `tables` narrow tables of `rows` insert changes."""
    if path.exists():
        return path
    log(f"building {path} ({tables} x {rows} changes)")
    building = Path(str(path) + ".building")
    for suffix in ("", "-wal", "-shm"):
        Path(str(building) + suffix).unlink(missing_ok=True)
    sim("create", "--db", str(building), "--clock", "manual", "--start", "2026-01-01 00:00:00")
    names = ["bench.narrow"] if tables == 1 else [f"bench.narrow{k}" for k in range(tables)]
    for name in names:
        sim("create-table", "--db", str(building), "--table", name,
            *[a for c in COLUMNS for a in ("--column", c)], "--key", "id")
    statements = building.with_suffix(".json")
    for name in names:
        for first in range(1, rows + 1, PER_COMMIT):
            batch = [{"op": "insert", "table": name, "row": narrow_row(i)}
                     for i in range(first, min(rows + 1, first + PER_COMMIT))]
            statements.write_text(json.dumps(batch))
            sim("dml", "--db", str(building), "--file", str(statements))
            sim("clock", "--db", str(building), "--advance", "1")
    statements.unlink()
    building.rename(path)
    for suffix in ("-wal", "-shm"):
        Path(str(building) + suffix).unlink(missing_ok=True)
    return path


def build_fake(ref_python, path, tables, rows):
    if path.exists():
        return path
    log(f"building {path} ({tables} x {rows} changes, the reference's fake backend)")
    subprocess.run([str(ref_python), str(CHILD), "gen-fake", "--path", str(path), "--tables", str(tables),
                    "--rows", str(rows)], check=True, env=clean_env())
    return path


WIRE_LOGIN = ("bench_reader", "Bench-pw-1")


def serve(path, servers):
    """`sim serve` over the database at `path` (a login added once); the options both libraries
    read it with, as JSON. The server runs until the bench ends."""
    added = subprocess.run([str(SIM), "sim", "login", "add", "--db", str(path), "--name", WIRE_LOGIN[0],
                            "--password", WIRE_LOGIN[1], "--db-owner"], capture_output=True, text=True)
    if added.returncode != 0 and "exists" not in added.stderr:
        raise RuntimeError(f"sim login add on {path}: {added.stderr.strip()}")
    info = json.loads(subprocess.run([str(SIM), "sim", "info", "--db", str(path), "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    server = subprocess.Popen([str(SIM), "sim", "serve", "--db", str(path), "--port", "0"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    servers.append(server)
    line = server.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise RuntimeError(f"sim serve over {path} did not start: {line}")
    port = line.rsplit(":", 1)[1]
    return json.dumps({"connectionString": f"Server=127.0.0.1,{port};Database={info['database']};"
                                           f"UID={WIRE_LOGIN[0]};PWD={WIRE_LOGIN[1]};Encrypt=no"})


# --- runs -----------------------------------------------------------------------------------------

def ours_ready():
    probe = ("import mssql_cdc; mssql_cdc.start_many; mssql_cdc.await_all; mssql_cdc.stream; "
             "from mssql_cdc import _core; _core.Feed; import mssql_cdc.source, mssql_cdc.sink")
    r = subprocess.run([str(OURS_PYTHON), "-c", probe], capture_output=True, text=True, env=clean_env(),
                       cwd="/")
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


VARIANTS = [("ours", "classic", "paths"), ("ours", "classic", "names"), ("ours", "connect", "names"),
            ("ref", "classic", "paths"), ("ref", "classic", "names")]


def run_child(python, variant, scenarios, warm, jars, work_root, logs, round_no):
    """One fresh warmed Spark for `variant` that runs every scenario in turn: {name: result}."""
    lib, session, tables_as = variant
    tag = f"{lib}-{session}-{tables_as}-r{round_no}"
    out = work_root / f"{tag}.json"
    out.unlink(missing_ok=True)
    log_file = logs / f"{tag}.log"
    cmd = [str(python), str(CHILD), "run", "--lib", lib, "--warm", str(warm), "--jars", jars,
           "--work", str(work_root / tag), "--out", str(out), "--session", session, "--tables-as", tables_as]
    for name, (data, tables, rows) in scenarios.items():
        cmd += ["--scenario", name, str(data), str(tables), str(rows)]
    log(f"round {round_no}: {lib}, {session} session, {tables_as}")
    started = time.perf_counter()
    with open(log_file, "w") as f:
        try:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=clean_env(), cwd="/",
                               timeout=RUN_TIMEOUT_S)
            code = r.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    if code != 0 or not out.exists():
        tail = log_file.read_text(errors="replace").splitlines()[-15:]
        log(f"{tag} failed ({code}); {log_file}:\n  " + "\n  ".join(tail))
        return {}
    result = json.loads(out.read_text())
    log(f"  process {time.perf_counter() - started:.0f} s, session {result['session_s']:.1f} s, "
        f"warm-up {result['warmup_s']:.1f} s")
    for name, r in result["scenarios"].items():
        m = r["memory"]
        log(f"  {name}: wall {r['wall_s']:.1f} s, rows {sum(r['rows'].values())}, "
            f"batches {sum(r['batches'].values())}, peak {m['total'] / 2**20:.0f} MB (JVM "
            f"+{m['jvm_delta'] / 2**20:.0f}, driver Python +{m['self_delta'] / 2**20:.0f}, "
            f"{m['driver_py_count']} query processes {m['driver_py'] / 2**20:.0f}; kinds {m['driver_py_kinds']})")
    return result["scenarios"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="changes of the single table")
    parser.add_argument("--tables", type=int, default=10, help="tables of the many scenario")
    parser.add_argument("--many-rows", type=int, default=100_000, help="changes per table, many scenario")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    parser.add_argument("--wire", action="store_true",
                        help="both libraries read the same simulated database over TDS from sim serve")
    args = parser.parse_args()

    out = Path(args.dir).resolve()
    data = out / "spark_bench"
    work = data / "work"
    logs = data / "logs"
    for d in (data, work, logs):
        d.mkdir(parents=True, exist_ok=True)

    jars = subprocess.run(["bash", str(ROOT / "scripts" / "setup_spark.sh")], check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-1]
    ref_python = reference_python(out)
    ready, why = ours_ready()
    if not ready:
        log(f"our package is not usable from {OURS_PYTHON} ({why}); measuring the reference only")

    scenarios = {
        "single": (1, args.rows),
        "many": (args.tables, args.many_rows),
    }
    sets = {}
    servers = []
    t = time.perf_counter()
    for name, (tables, rows) in scenarios.items():
        if args.wire:
            shared = serve(build_sim(data / f"sim_{tables}x{rows}.sim", tables, rows), servers)
            sets[("ref", name)] = sets[("ours", name)] = shared
            continue
        sets[("ref", name)] = build_fake(ref_python, data / f"fake_{tables}x{rows}", tables, rows)
        if ready:
            # bench/source_bench's narrow database is this shape; reused when it is there.
            cached = out / f"source_bench_narrow_{rows}.sim"
            sets[("ours", name)] = (cached if tables == 1 and cached.exists()
                                    else build_sim(data / f"sim_{tables}x{rows}.sim", tables, rows))
    if args.wire:
        warm_wire = serve(build_sim(data / f"sim_1x{WARM_ROWS}.sim", 1, WARM_ROWS), servers)
        warm = {"ref": warm_wire, "ours": warm_wire}
    else:
        warm = {"ref": build_fake(ref_python, data / f"fake_1x{WARM_ROWS}", 1, WARM_ROWS)}
        if ready:
            warm["ours"] = build_sim(data / f"sim_1x{WARM_ROWS}.sim", 1, WARM_ROWS)
    log(f"data sets ready ({time.perf_counter() - t:.0f} s)")

    variants = [v for v in VARIANTS if ready or v[0] == "ref"]
    pythons = {"ours": OURS_PYTHON, "ref": ref_python}
    results = {}
    t = time.perf_counter()
    for round_no in range(args.rounds):
        order = variants if round_no % 2 == 0 else variants[::-1]
        for variant in order:
            lib = variant[0]
            runs = {name: (sets[(lib, name)], tables, rows) for name, (tables, rows) in scenarios.items()}
            by_name = run_child(pythons[lib], variant, runs, warm[lib], jars, work, logs, round_no)
            for name in scenarios:
                results.setdefault((name, variant), []).append(by_name.get(name))
    log(f"runs done ({time.perf_counter() - t:.0f} s)")
    for server in servers:
        server.terminate()
        server.wait(timeout=30)
    shutil.rmtree(work, ignore_errors=True)

    failures = []
    summary = {}
    for (name, variant), runs in results.items():
        tables, rows = scenarios[name]
        good = [r for r in runs if r is not None]
        for r in good:
            bad = {ci: n for ci, n in r["rows"].items() if n != rows}
            if len(r["rows"]) != tables or bad:
                failures.append(f"{name}/{variant}: bronze rows {r['rows']}, expected {rows} in each of {tables}")
        if len(good) < len(runs):
            failures.append(f"{name}/{variant}: {len(runs) - len(good)} of {len(runs)} runs failed (logs in {logs})")
        if good:
            wall = statistics.median(r["wall_s"] for r in good)
            peak = statistics.median(r["memory"]["total"] for r in good) / 2**20
            summary[(name, variant)] = {"wall": wall, "peak": peak, "per_stream": peak / tables,
                                        "rows": tables * rows, "runs": len(good)}

    source = ("both reading one simulated database over TDS from `sim serve` (plaintext): ours through "
              "the engine's TDS reader, the reference through mssql-python" if args.wire else
              "ours reading a simulated database file, the reference its own fake backend")
    print(f"Spark mode, `mssql_cdc` (ours) and `mssql-cdc-pyspark==0.8.0` (reference), {source}, local[2], "
          f"availableNow into Delta with a facts table; median of {args.rounds} runs each, each run a "
          f"fresh warmed Spark running single, then many. single: 1 table x {args.rows:,} changes; many: {args.tables} tables x "
          f"{args.many_rows:,} changes (start_many + await_all). Tables as paths, or as names in a Hive "
          f"metastore. Driver memory: peak RSS growth of the driver JVM and driver Python plus the "
          f"queries' driver-side Python processes; on Connect the driver is the local Connect server, a "
          f"child of the run, so its JVM and Python workers are counted the same way (with the client's "
          f"Python).")
    print()
    print("| scenario | library | session | tables | wall s | rows/s | peak driver memory MB | "
          "wall names/paths | wall / reference classic paths |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for name in scenarios:
        ref = summary.get((name, ("ref", "classic", "paths")))
        for variant in VARIANTS:
            lib, session, tables_as = variant
            label = "ours" if lib == "ours" else "reference"
            s = summary.get((name, variant))
            if s is None:
                print(f"| {name} | {label} | {session} | {tables_as} | n/a | | | | |")
                continue
            paths = summary.get((name, (lib, "classic", "paths")))
            vs_paths = f"{s['wall'] / paths['wall']:.2f}" if tables_as == "names" and paths else ""
            vs_ref = f"{s['wall'] / ref['wall']:.2f}" if ref and variant != ("ref", "classic", "paths") else ""
            memory = f"{s['peak']:.0f}"
            print(f"| {name} | {label} | {session} | {tables_as} | {s['wall']:.1f} | {s['rows'] / s['wall']:,.0f} | "
                  f"{memory} | {vs_paths} | {vs_ref} |")
    if not ready:
        print()
        print(f"Ours was not measured: {why}")
    if failures:
        print()
        for f in failures:
            print(f"FAILED: {f}")
        sys.exit(1)


if __name__ == "__main__":
    main()
