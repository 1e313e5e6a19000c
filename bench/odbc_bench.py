"""Change reads over TDS: the odbc backend against two ODBC-to-Arrow peers.

Serves each bench database (narrow: 10 columns, wide: 90 columns with two (max) strings; N
changes, built once by `odbc_bench prepare` in --dir) with `mssql-cdc sim serve`, then reads
its whole change range with 1, 2 and 4 parallel connections through:

  ours          build/bench/odbc_bench read --backends odbc: the engine's own TDS change reader
  ours-driver   the same through unixODBC + FreeTDS (changeReader=driver)
  arrow-odbc    read_arrow_batches_from_odbc, the same FreeTDS driver and settings
  mssql-python  Cursor.arrow_batch, Microsoft ODBC Driver 18 (bundled), Encrypt=no
  sim           build/bench/odbc_bench read --backends sim: the file read directly, the ceiling

and, on request (--readers), the odbc backend through Microsoft ODBC Driver 18 in plaintext
(ours-msodbc18, Encrypt=no) and over TLS (ours-msodbc18-tls: Encrypt=yes, TLS 1.2, the test
CA of `sim tls-cert` trusted through SSL_CERT_FILE), and through FreeTDS over TLS
(ours-driver-tls: Encryption=require); the engine's own reader over TLS with the same Driver 18
connection string (ours-tls: Encrypt=yes, TLS 1.2; ours-strict: Encrypt=strict, TDS 8.0 and TLS
1.3); with an access token instead of a password (ours-token: the engine's reader, Encrypt=yes;
ours-msodbc18-token: Driver 18 reads, as FreeTDS cannot log in with a token); the server then
has a certificate, so a Driver 18 login with Encrypt=no is encrypted
too, as with any SQL Server that has one. With TLS readers, a second table compares the engine's
reader over TLS with itself in plaintext (goal: 0.9 or more) and with the faster of Driver 18
and FreeTDS over TLS (goal: 2 or more; a token login against Driver 18 with the token).

Every reader sends the same statement (statements.h ChangeRows; the peers with the LSN bounds
as literals) over the same commit-aligned ranges (the engine's split), one connection per
range; a peer reads each range in its own process. Per run: wall seconds, rows/s, the
client's CPU seconds and the server process's CPU seconds over the run (/proc/<pid>/stat), so
that the client's share of the cost can be read apart from the server's. Each run's row count
is checked. Medians of up to --repeats runs (the run with the median wall time is shown):
a further pass over a table starts only while it fits --budget seconds, so the wide table
may get fewer runs than the narrow one. Readers are interleaved within a pass so that the
noise of a shared machine falls on all of them alike; on a loaded machine the CPU seconds
are the steadier figure.

  .venv/bin/python bench/odbc_bench.py --rows 1000000 [--wide-rows 250000] --dir bench/out
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

USER = "bench"
PASSWORD = "Bench-pw-1"
BATCH_ROWS = 10_000  # ours: arrowBatchSize's default; the peers are given the same
PACKET_SIZE = 32767  # the TDS packet size the odbc backend asks for; the peers too
PEERS = ("arrow-odbc", "mssql-python")
READERS = ("ours", "ours-driver") + PEERS + ("sim",)  # the default
TLS_READERS = ("ours-tls", "ours-strict", "ours-msodbc18-tls", "ours-driver-tls",
               "ours-token", "ours-msodbc18-token")  # on request
OURS_TDS = ("ours", "ours-tls", "ours-strict", "ours-token")  # the engine's own reader
# The token of the bench's token login (`odbc_bench prepare --access-token-env`), in this
# variable for prepare and the token readers; not a secret: the bench database's own.
TOKEN_ENV = "BENCH_ACCESS_TOKEN"
TOKEN = "bench-access-token-for-sim-serve"
# Over TLS, the drivers a reader of ours is compared with: a token login only with Driver 18.
TLS_DRIVERS = {"ours-tls": ("ours-msodbc18-tls", "ours-driver-tls"),
               "ours-strict": ("ours-msodbc18-tls", "ours-driver-tls"),
               "ours-token": ("ours-msodbc18-token",)}


# ---- a peer worker: one process, one connection, one range ----


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _read_arrow_odbc(job: dict) -> int:
    from arrow_odbc import read_arrow_batches_from_odbc

    reader = read_arrow_batches_from_odbc(
        job["sql"], job["connection"], batch_size=BATCH_ROWS, max_text_size=4000
    )
    return sum(batch.num_rows for batch in reader)


def _read_mssql_python(job: dict) -> int:
    import mssql_python

    connection = mssql_python.connect(job["connection"], autocommit=True)  # as ours
    cursor = connection.cursor()
    cursor.execute(job["sql"])
    rows = 0
    while (batch := cursor.arrow_batch(BATCH_ROWS)).num_rows > 0:
        rows += batch.num_rows
    cursor.close()
    connection.close()
    return rows


def worker(kind: str) -> None:
    """Reads a job from stdin, imports its library, says "ready", waits for "go", reads."""
    job = json.loads(sys.stdin.readline())
    read = _read_arrow_odbc if kind == "arrow-odbc" else _read_mssql_python
    if kind == "arrow-odbc":
        import arrow_odbc  # noqa: F401  (imported before the clock starts)
    else:
        import mssql_python  # noqa: F401
    import pyarrow  # noqa: F401
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    cpu = _cpu_seconds()
    start = time.perf_counter()
    try:
        rows = read(job)
        print(json.dumps({"rows": rows, "cpu": _cpu_seconds() - cpu,
                          "seconds": time.perf_counter() - start,
                          "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}),
              flush=True)
    except Exception as e:  # reported to the driver, which decides
        print(json.dumps({"error": f"{type(e).__name__}: {e}".replace("\n", " ")}), flush=True)


# ---- the driver ----


def server_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


class Served:
    """`mssql-cdc sim serve` on a free port, as a child process."""

    def __init__(self, mssql_cdc: Path, db: str, log: Path, certs: Path | None = None):
        self.log = open(log, "ab")
        tls = ["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key")] if certs else []
        self.proc = subprocess.Popen([str(mssql_cdc), "sim", "serve", "--db", db, "--port", "0", *tls],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise SystemExit(f"sim serve did not start (see {log}): {line!r}")
        self.port = int(line.rsplit(":", 1)[1])

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def peer_connection(kind: str, port, database: str, password: str = PASSWORD) -> str:
    if kind == "arrow-odbc":
        # What the odbc backend's translation gives FreeTDS for
        # Server=127.0.0.1,port;Database=db;Encrypt=no (driver_connection.cc).
        return (f"Driver={{FreeTDS}};Server=127.0.0.1;Port={port};Database={database};"
                f"TDS_Version=7.4;Encryption=off;ClientCharset=UTF-8;PacketSize={PACKET_SIZE};"
                f"UID={USER};PWD={password};")
    return (f"Server=127.0.0.1,{port};Database={database};Encrypt=no;PacketSize={PACKET_SIZE};"
            f"UID={USER};PWD={password};")


def literal_sql(sql: str, lo: str, hi: str) -> str:
    return sql.replace("?", lo, 1).replace("?", hi, 1)


def run_peer(kind: str, table: dict, ranges: list, served: Served) -> dict:
    """One read of every range, each in its own worker process; the clock runs from "go"."""
    workers = []
    for r in ranges:
        p = subprocess.Popen([sys.executable, __file__, "--worker", kind], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        job = {"sql": literal_sql(table["sql"], r["from"], r["to"]),
               "connection": peer_connection(kind, served.port, table["database"])}
        p.stdin.write(json.dumps(job) + "\n")
        p.stdin.flush()
        workers.append(p)
    for p in workers:
        if p.stdout.readline().strip() != "ready":  # its library failed to load
            for w in workers:
                w.kill()
                w.wait()
            return {"error": f"a {kind} worker did not start"}
    server_before = server_cpu(served.pid)
    start = time.perf_counter()
    for p in workers:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = [json.loads(p.stdout.readline() or '{"error": "worker died"}') for p in workers]
    seconds = time.perf_counter() - start
    server = server_cpu(served.pid) - server_before
    for p in workers:
        p.stdin.close()
        p.wait()
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"error": errors[0]}
    return {"rows": sum(r["rows"] for r in results), "seconds": seconds,
            "client_cpu": sum(r["cpu"] for r in results), "server_cpu": server,
            "peak_rss_mb": sum(r["peak_rss_mb"] for r in results)}


def msodbc18_library() -> str | None:
    """The Microsoft ODBC Driver 18 library of mssql-python-odbc, as the package finds it."""
    import mssql_cdc

    return mssql_cdc._core.bundled_odbc_driver()


def run_ours(bench: Path, reader: str, table: dict, n: int, served: Served, certs: Path | None) -> dict:
    command = [str(bench), "read", "--db", table["path"], "--port", str(served.port),
               "--user", USER, "--password", PASSWORD, "--connections", str(n),
               "--server-pid", str(served.pid), "--json", "--expect-rows", str(table["rows"]),
               "--backends", "sim" if reader == "sim" else "odbc",
               "--change-reader", "tds" if reader in OURS_TDS else "driver"]
    env = dict(os.environ)
    if reader.startswith("ours-msodbc18") or reader in ("ours-tls", "ours-strict", "ours-token"):
        library = msodbc18_library()
        if library is None:
            return {"error": "mssql-python-odbc (Microsoft ODBC Driver 18) is not installed"}
        command += ["--driver", library]
    elif reader == "ours-driver-tls":
        command += ["--driver", "FreeTDS"]
    if reader.endswith("-tls") or reader.endswith("-token") or reader == "ours-strict":
        command += ["--encrypt", "strict" if reader == "ours-strict" else "yes"]
        env["SSL_CERT_FILE"] = str(certs / "ca.pem")
    if reader.endswith("-token"):
        command += ["--access-token-env", TOKEN_ENV]
        env[TOKEN_ENV] = TOKEN
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"error": out.stderr.strip()}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_pass(bench: Path, build: Path, table: dict, counts: list, readers: list, log: Path,
             results: dict, skipped: dict, certs: Path | None) -> None:
    """Every reader once for every count of connections, against a fresh server."""
    served = Served(build / "mssql-cdc", table["path"], log, certs)
    try:
        for n in counts:
            ranges = table["ranges"][str(n)]
            for reader in readers:
                if reader in skipped:
                    continue
                if reader in PEERS:
                    run = run_peer(reader, table, ranges, served)
                else:
                    run = run_ours(bench, reader, table, n, served, certs)
                if "error" in run:
                    if reader in PEERS or reader.startswith("ours-msodbc18") or reader in TLS_READERS:
                        skipped[reader] = run["error"]
                        continue
                    raise SystemExit(f"{reader} failed: {run['error']}")
                if run["rows"] != table["rows"]:
                    raise SystemExit(f"{reader} read {run['rows']} rows of {table['shape']}, "
                                     f"expected {table['rows']}")
                results.setdefault((table["shape"], n, reader), []).append(run)
    finally:
        served.stop()


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return 0
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=int(os.environ.get("BENCH_ODBC_ROWS", 1_000_000)))
    ap.add_argument("--wide-rows", type=int, default=int(os.environ.get("BENCH_ODBC_WIDE_ROWS", 0)),
                    help="changes of the wide table (default: --rows)")
    ap.add_argument("--dir", default="bench/out")
    ap.add_argument("--build", default=str(root / "build"), help="the build tree to use")
    ap.add_argument("--repeats", type=int, default=3, help="runs per reader, at most")
    ap.add_argument("--budget", type=float, default=float(os.environ.get("BENCH_ODBC_BUDGET", 480)),
                    help="seconds: a further pass over a table starts only if it fits")
    ap.add_argument("--connections", default="1,2,4")
    ap.add_argument("--shapes", default="narrow,wide")
    ap.add_argument("--readers", default=",".join(READERS),
                    help="of ours, ours-driver, arrow-odbc, mssql-python, sim, ours-msodbc18 (the odbc "
                         "backend through the Driver 18 library mssql-python bundles), ours-msodbc18-tls "
                         "and ours-driver-tls (the same over TLS), ours-tls and ours-strict (the engine's "
                         "reader over TLS, Encrypt=yes and strict), ours-token and ours-msodbc18-token "
                         "(the engine's reader and Driver 18 over TLS, logged in with an access token)")
    args = ap.parse_args()
    build = Path(args.build)
    bench = build / "bench" / "odbc_bench"
    counts = [int(c) for c in args.connections.split(",")]
    shapes = args.shapes.split(",")
    readers = args.readers.split(",")
    if "ours" not in readers:
        raise SystemExit("--readers must include ours: the ratios are taken against it")

    wide_rows = ["--wide-rows", str(args.wide_rows)] if args.wide_rows > 0 else []
    prepared = subprocess.run([str(bench), "prepare", "--rows", str(args.rows), *wide_rows, "--dir", args.dir,
                               "--user", USER, "--password", PASSWORD,
                               "--access-token-env", TOKEN_ENV, "--connections", args.connections],
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, **{TOKEN_ENV: TOKEN}))  # "building ..." to stderr
    if prepared.returncode != 0:
        raise SystemExit("odbc_bench prepare failed")
    tables = [t for t in json.loads(prepared.stdout) if t["shape"] in shapes]
    certs = None
    if any(r in TLS_READERS for r in readers):
        certs = Path(args.dir) / "certs"
        if not (certs / "server.pem").exists():
            subprocess.run([str(build / "mssql-cdc"), "sim", "tls-cert", "--host", "localhost", "--out-dir",
                            str(certs)], check=True, stdout=subprocess.DEVNULL)

    from importlib.metadata import version
    print(f"Readers: ours (mssql-cdc odbc backend, its own TDS change reader), ours-driver "
          f"(the same backend through unixODBC + FreeTDS {freetds_version()}), arrow-odbc {version('arrow-odbc')} (the same FreeTDS), "
          f"mssql-python {version('mssql-python')} (Microsoft ODBC Driver "
          f"{version('mssql-python-odbc')}, Encrypt=no), sim (the file read directly, the "
          f"ceiling){', ours-msodbc18 (the odbc backend through that Driver 18 library)' if 'ours-msodbc18' in readers else ''}"
          f"{', ours-msodbc18-tls and ours-driver-tls (the same over TLS 1.2, Encrypt=yes), ours-tls and ours-strict (the engine reader over TLS 1.2 with Encrypt=yes, over TLS 1.3 with Encrypt=strict; the server has a certificate)' if certs else ''}"
          f"{', ours-token and ours-msodbc18-token (the engine reader and Driver 18 over TLS 1.2, logged in with an access token)' if 'ours-token' in readers else ''}; "
          f"{BATCH_ROWS} rows per Arrow batch for all; one connection per range, a peer's in "
          f"its own process; server `mssql-cdc sim serve` on 127.0.0.1, same machine. "
          f"Medians of up to {args.repeats} runs (as many as fit {args.budget:.0f} s); CPU in "
          f"seconds over the run; client peak RSS summed over the client's processes (ours: one "
          f"process for all its connections; a peer: one Python process per connection).")
    print()
    for kind in PEERS:
        if kind in readers:
            print(f"- {kind} connects with "
                  f"`{peer_connection(kind, 'PORT', tables[0]['database'], '***')}`")
    print()

    results: dict = {}  # (shape, n, reader) -> [run]
    skipped: dict = {}  # reader -> why
    log = Path(args.dir) / "odbc_bench_serve.log"
    started = time.monotonic()
    pass_seconds: dict = {}
    for repeat in range(args.repeats):
        for table in tables:
            elapsed = time.monotonic() - started
            if repeat > 0 and elapsed + pass_seconds[table["shape"]] > args.budget:
                continue
            t0 = time.monotonic()
            run_pass(bench, build, table, counts, readers, log, results, skipped, certs)
            pass_seconds.setdefault(table["shape"], time.monotonic() - t0)

    def median(shape, n, reader):
        runs = results.get((shape, n, reader))
        if not runs:
            return None
        runs = sorted(runs, key=lambda r: r["seconds"])
        return runs[len(runs) // 2]

    def fastest(shape, n, names):
        """(name, median run) of the reader of `names` with the shortest median, or None."""
        ran = [(name, median(shape, n, name)) for name in names]
        ran = [(name, m) for name, m in ran if m is not None]
        return min(ran, key=lambda pm: pm[1]["seconds"]) if ran else None

    print("| table | connections | reader | runs | rows | wall s | rows/s | client CPU s "
          "| server CPU s | client peak RSS MB | ours ÷ reader (rows/s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for table in tables:
        for n in counts:
            ours = median(table["shape"], n, "ours")
            for reader in readers:
                m = median(table["shape"], n, reader)
                if m is None:
                    continue
                runs = len(results[(table["shape"], n, reader)])
                print(f"| {table['shape']} | {n} | {reader} | {runs} | {m['rows']} "
                      f"| {m['seconds']:.2f} | {m['rows'] / m['seconds']:.0f} "
                      f"| {m['client_cpu']:.2f} | {m['server_cpu']:.2f} "
                      f"| {m['peak_rss_mb']:.0f} | {m['seconds'] / ours['seconds']:.2f} |")
    print()
    print("Ours ÷ the faster peer, in rows/s (the goal: 2 or more) and in client CPU seconds "
          "(theirs ÷ ours), and ours ÷ the sim ceiling:")
    print()
    print("| table | connections | ours rows/s | faster peer | its rows/s | ours ÷ faster peer "
          "| its client CPU ÷ ours | ours ÷ sim |")
    print("|---|---|---|---|---|---|---|---|")
    for table in tables:
        for n in counts:
            ours = median(table["shape"], n, "ours")
            fastest_peer = fastest(table["shape"], n, PEERS)
            sim = median(table["shape"], n, "sim")
            if fastest_peer:
                name, best = fastest_peer
                peer_text = (f"{name} | {best['rows'] / best['seconds']:.0f} "
                             f"| {best['seconds'] / ours['seconds']:.2f} "
                             f"| {best['client_cpu'] / ours['client_cpu']:.2f}")
            else:
                peer_text = "none | - | - | -"
            sim_text = f"{sim['seconds'] / ours['seconds']:.2f}" if sim else "-"
            print(f"| {table['shape']} | {n} | {ours['rows'] / ours['seconds']:.0f} | {peer_text} "
                  f"| {sim_text} |")
    tls_ours = [r for r in ("ours-tls", "ours-strict", "ours-token") if r in readers]
    if tls_ours:
        print()
        print("The engine's reader over TLS, in rows/s, ÷ itself in plaintext (goal: 0.9 or more) and "
              "÷ the faster of Driver 18 and FreeTDS over TLS (goal: 2 or more; a token login ÷ Driver 18 "
              "with the token); client CPU seconds apart from the server's:")
        print()
        print("| table | connections | reader | rows/s | ÷ ours plaintext | faster TLS driver | its rows/s "
              "| ÷ it | client CPU s | server CPU s | client peak RSS MB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for table in tables:
            for n in counts:
                plain = median(table["shape"], n, "ours")
                for reader in tls_ours:
                    best = fastest(table["shape"], n, [r for r in TLS_DRIVERS[reader] if r in readers])
                    m = median(table["shape"], n, reader)
                    if m is None:
                        continue
                    rate = m["rows"] / m["seconds"]
                    driver_text = (f"{best[0]} | {best[1]['rows'] / best[1]['seconds']:.0f} "
                                   f"| {best[1]['seconds'] / m['seconds']:.2f}") if best else "none | - | -"
                    print(f"| {table['shape']} | {n} | {reader} | {rate:.0f} "
                          f"| {plain['seconds'] / m['seconds']:.2f} | {driver_text} "
                          f"| {m['client_cpu']:.2f} | {m['server_cpu']:.2f} | {m['peak_rss_mb']:.0f} |")
    for reader, why in skipped.items():
        print()
        print(f"{reader} was left out: it failed with: {why}")
    print()
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


def freetds_version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "tdsodbc"],
                             capture_output=True, text=True)
        return out.stdout.strip() or "(version unknown)"
    except OSError:
        return "(version unknown)"


if __name__ == "__main__":
    sys.exit(main())
