"""One measured run of bench/spark_bench.py, in a process (and a Spark) of its own.

The same script runs for both libraries, each with its own interpreter, since both packages are
named `mssql_cdc`: our package from .venv, the reference (mssql-cdc-pyspark, used only through
its public API) from .venv-reference. It imports nothing from the repository but the package
the interpreter has, and, for a Spark Connect run, tests/local_spark.py's server.

    python bench/spark_bench_child.py gen-fake --path DIR --tables N --rows R   (reference only)
    python bench/spark_bench_child.py run --lib ours|ref --scenario NAME PATH N R [--scenario ...]
                                      --warm PATH --jars DIR --work DIR --out FILE.json
                                      [--session classic|connect] [--tables-as paths|names]
    python bench/spark_bench_child.py run --lib ours --hold S --hold-run N PATH [--hold-run ...] ...

`--tables-as names` gives bronze and facts as table names (<scenario>_bronze.<ci>,
<scenario>_ops.facts; the warm-up's in warm_bronze and warm_ops)
in a Hive metastore (embedded Derby) instead of paths. `--session connect` runs the streams
through a local Spark Connect server; the server is a child process, so the memory figures
count its JVM and Python workers as a classic run counts its driver's.

`gen-fake` writes the reference's fake CDC backend: N capture instances bench_narrow[_k], each
with R insert changes in commits of 10,000, the rows of bench/bench_tables.cc's narrow shape.

`run` starts a local[2] Spark (the session of tests/delta/conftest.py, driver memory 2g), warms
it with one small availableNow stream of the same library (`--warm`, one table), then, for each
--scenario in turn, times its N availableNow streams (R changes each, in PATH) into Delta with a
facts table: `stream(...).to_delta` for one table, `start_many` + `await_all` for several.
With --hold-run it runs, for each in turn, N always-on streams of PATH for --hold S seconds,
then stops them. Meanwhile a thread samples every 0.2 s the resident memory of this process
(the driver, where foreachBatch runs), of the driver JVM, and of the Python processes the JVM
starts for the queries on the driver side (streaming source runners, planners); the executors'
Python workers (pyspark.daemon and its forks) are counted apart. The result
(times, rows per table, memory peaks) goes to --out as JSON.
"""

import argparse
import json
import os
import shutil
import sys
import threading
import time

PER_COMMIT = 10_000
PAGE = os.sysconf("SC_PAGE_SIZE")
FAKE_COLUMNS = ("id bigint, qty int, total bigint, name string, amount decimal(18,2), "
                "created timestamp, active boolean, score double, day date, ref string")


def text(i, length):
    s = "v" + str(i * 2654435761 % 1000003)
    while len(s) < length:
        s += s
    return s[:length]


def narrow_row(i):
    """bench/bench_tables.cc NarrowShape().row(i), as JSON-able values."""
    return {"id": i, "qty": i % 1000, "total": i * 7, "name": text(i, 24),
            "amount": f"{i % 100000}.{10 + i % 90}", "created": "2026-01-01 00:00:00.1234567",
            "active": bool(i % 2), "score": i / 7.0, "day": "2026-03-15",
            "ref": "%08X-0000-4000-8000-%012X" % (i & 0xFFFFFFFF, i)}


def capture_instances(tables):
    return ["bench_narrow"] if tables == 1 else [f"bench_narrow{k}" for k in range(tables)]


def gen_fake(args):
    from mssql_cdc.fake import FakeCdcDatabase

    building = args.path + ".building"
    shutil.rmtree(building, ignore_errors=True)
    cis = capture_instances(args.tables)
    db = FakeCdcDatabase(building, cis, columns={ci: FAKE_COLUMNS for ci in cis})
    for ci in cis:
        for first in range(1, args.rows + 1, PER_COMMIT):
            rows = [(2, narrow_row(i)) for i in range(first, min(args.rows + 1, first + PER_COMMIT))]
            # The fake stores JSON; its timestamps take microseconds.
            for _, r in rows:
                r["created"] = r["created"][:26] + "+00:00"
            db.commit(ci, rows)
    os.rename(building, args.path)


# --- memory sampling through /proc ---------------------------------------------------------------

def proc_table():
    """{pid: (ppid, comm)} of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        table[int(name)] = (ppid, comm)
    return table


def rss(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except OSError:
        return 0


def private_bytes(pid):
    """Memory only this process holds (Private_Clean + Private_Dirty): what one more query process
    costs, its shared libraries counted once for all of them."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
    except OSError:
        return 0
    return total


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def classify():
    """The descendants of this process by kind: {"jvm": [...], "driver_py": [...], "executor_py": [...]}."""
    table = proc_table()
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    kinds = {"jvm": [], "driver_py": [], "executor_py": []}
    stack = [(c, False) for c in children.get(os.getpid(), [])]
    while stack:
        pid, under_daemon = stack.pop()
        comm = table[pid][1]
        line = cmdline(pid)
        daemon = under_daemon or "pyspark.daemon" in line
        if comm == "java":
            kinds["jvm"].append(pid)
        elif daemon:
            kinds["executor_py"].append(pid)
        elif comm.startswith("python") or "python" in line.split(" ")[0]:
            kinds["driver_py"].append((pid, line))
        stack.extend((c, daemon) for c in children.get(pid, []))
    return kinds


class Sampler(threading.Thread):
    def __init__(self, interval=0.2):
        super().__init__(daemon=True)
        self.interval = interval
        self.stop_event = threading.Event()
        kinds = classify()
        self.jvm_base = sum(rss(p) for p in kinds["jvm"])
        self.self_base = rss(os.getpid())
        self.base_driver_py = {pid for pid, _ in kinds["driver_py"]}
        self.peak = {"total": 0, "jvm_delta": 0, "self_delta": 0, "driver_py": 0, "executor_py": 0,
                     "driver_py_count": 0, "driver_py_private": 0, "total_private": 0}
        self.seen = {}
        self.samples = 0

    def sample(self):
        kinds = classify()
        jvm = sum(rss(p) for p in kinds["jvm"]) - self.jvm_base
        me = rss(os.getpid()) - self.self_base
        py = 0
        py_private = 0
        n = 0
        for pid, line in kinds["driver_py"]:
            if pid in self.base_driver_py or not line:  # not line: a process that just ended
                continue
            py += rss(pid)
            py_private += private_bytes(pid)
            n += 1
            module = next((w for w in line.split(" ") if w.startswith("pyspark.")), line[:120])
            self.seen[module] = self.seen.get(module, set()) | {pid}
        ex = sum(rss(p) for p in kinds["executor_py"])
        total = max(jvm, 0) + max(me, 0) + py
        total_private = max(jvm, 0) + max(me, 0) + py_private
        self.samples += 1
        for key, value in (("total", total), ("jvm_delta", jvm), ("self_delta", me), ("driver_py", py),
                           ("executor_py", ex), ("driver_py_count", n), ("driver_py_private", py_private),
                           ("total_private", total_private)):
            self.peak[key] = max(self.peak[key], value)

    def run(self):
        while not self.stop_event.is_set():
            self.sample()
            self.stop_event.wait(self.interval)

    def finish(self):
        self.stop_event.set()
        self.join()
        self.sample()
        return {**self.peak, "samples": self.samples,
                "driver_py_kinds": {k: len(v) for k, v in self.seen.items()}}


# --- the run --------------------------------------------------------------------------------------

def spark_session(jars_dir, work, *, hive=False):
    import glob

    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    warehouse = os.path.join(work, "warehouse")
    jars = sorted(glob.glob(os.path.join(jars_dir, "*.jar")))
    builder = SparkSession.builder
    if hive:  # a Hive metastore in embedded Derby, for tables named in a catalog
        builder = builder.enableHiveSupport().config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true")
    session = (
        builder.master("local[2]")
        .appName("mssql-cdc-spark-bench")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def options_for(lib, data):
    """The source options of a data set: a simulated database file (ours) or fake directory
    (the reference), or, given as a JSON object, the options of a `sim serve` both read over TDS,
    each through its default reader (ours: the engine's; the reference: mssql-python)."""
    if data.startswith("{"):
        return dict(json.loads(data), backend="odbc" if lib == "ours" else "mssql-python")
    if lib == "ours":
        return {"backend": "sim", "simPath": data}
    return {"backend": "fake", "fakePath": data}


def locations(root, names, ci, app):
    """(bronze, checkpoint, facts) of a stream: paths under `root`, or names in the catalog, in
    schemas of the run `app` (the warm-up's apart)."""
    if names:
        return f"{app}_bronze.{ci}", os.path.join(root, "ckpt", ci), f"{app}_ops.facts"
    return os.path.join(root, "bronze", ci), os.path.join(root, "ckpt", ci), os.path.join(root, "facts")


def read_table(spark, location):
    return spark.table(location) if "/" not in location else spark.read.format("delta").load(location)


def hold_streams(spark, lib, data, tables, root, app, interval, hold, result):
    """Starts `tables` always-on streams (processingTime `interval`) with start_many, keeps them
    running for `hold` seconds while the driver's memory is sampled, then stops them: the steady
    cost of running streams on the driver. Records the time start_many took and the streams that failed
    (to start, or while running)."""
    import mssql_cdc

    sampler = Sampler()
    sampler.start()
    cis = capture_instances(tables)
    bronze, ckpt, facts = locations(root, False, "{ci}", app)
    t = time.perf_counter()
    try:
        queries = mssql_cdc.start_many(
            spark, options_for(lib, data), cis, target=bronze, app_id=app + "-{ci}", checkpoint=ckpt,
            facts_table=facts, trigger={"processingTime": interval})
        result["start_error"] = None
    except Exception as e:  # noqa: BLE001 - a start that fails is a result here
        queries = {}
        result["start_error"] = f"{type(e).__name__}: {e}"[:400]
    result["start_s"] = time.perf_counter() - t
    time.sleep(hold)
    result["memory"] = sampler.finish()
    failed = {ci: str(q.exception())[:200] for ci, q in queries.items() if q.exception() is not None}
    result["failed"] = failed
    result["started"] = len(queries)
    mssql_cdc.stop_all(queries)
    return queries


def run_streams(spark, lib, data, tables, root, app, names=False):
    """Starts the availableNow streams, waits for them; returns {ci: query}."""
    import mssql_cdc

    cis = capture_instances(tables)
    opts = options_for(lib, data)
    if names:
        for schema in (f"{app}_bronze", f"{app}_ops"):
            spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    if tables == 1:
        ci = cis[0]
        bronze, ckpt, facts = locations(root, names, ci, app)
        q = mssql_cdc.stream(spark, dict(opts, captureInstance=ci)).to_delta(
            bronze, f"{app}-{ci}", ckpt, facts, trigger={"availableNow": True})
        q.awaitTermination()
        return {ci: q}
    bronze, ckpt, facts = locations(root, names, "{ci}", app)
    queries = mssql_cdc.start_many(
        spark, opts, cis, target=bronze, app_id=app + "-{ci}", checkpoint=ckpt, facts_table=facts,
        trigger={"availableNow": True})
    failed = mssql_cdc.await_all(queries)
    if failed:
        raise RuntimeError(f"streams failed: {failed}")
    return queries


def time_scenario(spark, lib, data, tables, rows, root, app, names):
    """The availableNow streams of one scenario, timed, with the driver's memory sampled meanwhile:
    wall seconds, memory peaks, bronze rows per table, facts rows and batches."""
    result = {"tables": tables, "rows_per_table": rows}
    sampler = Sampler()
    sampler.start()
    t = time.perf_counter()
    queries = run_streams(spark, lib, data, tables, root, app, names=names)
    result["wall_s"] = time.perf_counter() - t
    result["memory"] = sampler.finish()
    result["rows"] = {ci: read_table(spark, locations(root, names, ci, app)[0]).count() for ci in queries}
    result["facts_rows"] = read_table(spark, locations(root, names, "x", app)[2]).count()
    result["batches"] = {ci: sum(1 for p in q.recentProgress if (p["numInputRows"] or 0) > 0)
                         for ci, q in queries.items()}
    return result


def run(args):
    import contextlib

    import mssql_cdc

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    names = args.tables_as == "names"
    result = {"lib": args.lib, "package_file": mssql_cdc.__file__, "session": args.session, "tables_as": args.tables_as}
    with contextlib.ExitStack() as stack:
        t = time.perf_counter()
        if args.session == "connect":
            # A local Spark Connect server as the tests start it (tests/local_spark.py).
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
            from local_spark import connect_server
            from pyspark.sql import SparkSession

            url = stack.enter_context(connect_server(os.path.join(args.work, "warehouse"), driver_memory="2g",
                                                     hive=names))
            spark = SparkSession.builder.remote(url).getOrCreate()
        else:
            spark = spark_session(args.jars, args.work, hive=names)
        result["session_s"] = time.perf_counter() - t

        # Warm-up: the first query of a JVM pays class loading and the Python workers' start (and
        # with names, the metastore's start), so it writes its tables the way the run does.
        t = time.perf_counter()
        run_streams(spark, args.lib, args.warm, 1, os.path.join(args.work, "warm"), "warm", names=names)
        result["warmup_s"] = time.perf_counter() - t

        result["holds"] = {}
        for tables, data in args.hold_run:
            held = result["holds"][tables] = {}
            hold_streams(spark, args.lib, data, int(tables), os.path.join(args.work, f"hold_{tables}"),
                         f"hold{tables}", args.interval, args.hold, held)
        result["scenarios"] = {}
        for name, data, tables, rows in args.scenario:
            result["scenarios"][name] = time_scenario(spark, args.lib, data, int(tables), int(rows),
                                                      os.path.join(args.work, name), name, names)
        spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    shutil.rmtree(args.work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen-fake")
    g.add_argument("--path", required=True)
    g.add_argument("--tables", type=int, required=True)
    g.add_argument("--rows", type=int, required=True)
    r = sub.add_parser("run")
    r.add_argument("--lib", choices=["ours", "ref"], required=True)
    r.add_argument("--scenario", nargs=4, action="append", default=[], metavar=("NAME", "PATH", "TABLES", "ROWS"),
                   help="availableNow streams to time, in the order given")
    r.add_argument("--hold-run", nargs=2, action="append", default=[], metavar=("TABLES", "PATH"),
                   help="always-on streams to keep running for --hold seconds, in the order given")
    r.add_argument("--hold", type=float, default=30,
                   help="how long each --hold-run keeps its always-on streams (processingTime --interval) running")
    r.add_argument("--interval", default="5 seconds")
    r.add_argument("--warm", required=True)
    r.add_argument("--jars", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--session", choices=["classic", "connect"], default="classic")
    r.add_argument("--tables-as", choices=["paths", "names"], default="paths")
    args = parser.parse_args()
    # A Spark Connect client can leave threads that keep the interpreter from exiting: exit
    # at once, with the status the run earned.
    status = 0
    try:
        gen_fake(args) if args.cmd == "gen-fake" else run(args)
    except BaseException:  # noqa: BLE001 (reported, then the status says it)
        import traceback

        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
