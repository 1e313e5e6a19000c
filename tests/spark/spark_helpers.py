"""Helpers of the Spark mode tests: simulated shop databases made with the CLI, and readers of
what landed, through the engine's own Delta reader so that Spark does not check itself."""

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["dbo_customers", "dbo_orders", "dbo_order_items"]
# Bronze's columns that a stream adds to the change rows.
ADDED = ("_batch_id", "_snapshot", "_chunk")


def make_shop(cli, tmp_path, transactions=200, seed=5, name="shop.sim"):
    """A simulated shop database on a manual clock: the demo schema and `transactions` transactions."""
    db = tmp_path / name
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    workload(cli, db, transactions, seed)
    return db


def workload_args(db, transactions, seed, tables=None):
    """The command line's arguments of `workload`."""
    args = ["sim", "workload", "--db", db, "--tps", 100, "--transactions", transactions, "--seed", seed,
            "--statements", 2]
    return args + (["--tables", *tables] if tables else [])


def workload(cli, db, transactions, seed, tables=None):
    """`transactions` more transactions of two statements each, on `tables` (e.g. "dbo.orders") or all."""
    cli(*workload_args(db, transactions, seed, tables))


def sim_options(db):
    return {"backend": "sim", "simPath": str(db)}


def info(cli, db):
    return json.loads(cli("sim", "info", "--db", db, "--json").stdout)


def change_table(db, ci):
    """Every change row of `ci` the database holds, in the stream's output schema."""
    from mssql_cdc import _core

    source = _core.open_sim_source(str(db))
    top = source.max_lsn()
    if top is None:
        return pa.table({})
    stream = source.read_changes(ci, source.min_lsn(ci), top)
    return pa.RecordBatchReader.from_stream(stream).read_all()


def delta(path):
    from mssql_cdc import _core

    return pa.RecordBatchReader.from_stream(_core.delta_read(str(path))).read_all()


def row_key(row):
    return (row["_start_lsn"], row["_seqval"], row["_operation"])


def assert_bronze_equals_change_table(db, ci, bronze_path):
    """Every change of the change table is in bronze once, with the same values."""
    changes = change_table(db, ci).to_pylist()
    bronze = [{k: v for k, v in row.items() if k not in ADDED} for row in delta(bronze_path).to_pylist()]
    assert changes, f"{ci} has no changes"
    keys = [row_key(r) for r in bronze]
    assert len(keys) == len(set(keys)), f"{ci}: bronze holds a change twice"
    assert sorted(bronze, key=row_key) == sorted(changes, key=row_key)


def native_silver_pipeline(tmp_path, db, ci, lake, facts, control):
    """A pipeline file whose `apply-changes` keeps silver natively (at <lake>/silver_native/<ci>)
    from the bronze a Spark stream writes at <lake>/bronze/<ci>, with the same facts and control
    tables."""
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(f"""tables = ["{ci}"]
[source]
backend = "sim"
simPath = "{db}"
[stream]
target = "{lake}/bronze/{{ci}}"
app_id = "{{ci}}-native"
checkpoint = "{tmp_path}/native/{{ci}}"
facts_table = "{facts}"
control_table = "{control}"
[silver]
target = "{lake}/silver_native/{{ci}}"
""")
    return pipeline


def wait_for(condition, timeout=120, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what}")


def table_location(spark, name):
    """The storage location the session's catalog gives the table `name`, for the engine's reader."""
    from urllib.parse import unquote, urlparse

    location = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]
    parsed = urlparse(location)
    return unquote(parsed.path) if parsed.scheme == "file" else location


# Where the guide's examples keep their checkpoints ("/Volumes/main/ops/checkpoints/{ci}").
GUIDE_CHECKPOINTS = Path("/Volumes/main/ops/checkpoints")


@contextlib.contextmanager
def guide_checkpoints_held():
    """Holds the guide's checkpoint folder for the length of the block. It is one folder of the
    machine, not of a test, and the classic and Spark Connect passes run side by side
    (scripts/test.sh): a test that runs the guide's examples as written holds it, so that the
    other pass's test waits instead of removing its checkpoints under it."""
    import fcntl

    lock = Path("/tmp/mssql-cdc-tests-guide-checkpoints.lock")
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def reset_guide_tables(spark):
    """Drops the schemas the guide's examples name (bronze, ops) with their tables, removes their
    checkpoints, and creates the schemas empty again, as a user does once before the first run."""
    import shutil

    for schema in ("bronze", "ops"):
        spark.sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    shutil.rmtree(GUIDE_CHECKPOINTS, ignore_errors=True)
    for schema in ("bronze", "ops"):
        spark.sql(f"CREATE SCHEMA {schema}")


@contextlib.contextmanager
def served_sim(cli, db, user="spark_reader", password="Spark-pw-1", tls=False, grants=None):
    """`mssql-cdc sim serve` over `db` for the length of the block; yields the odbc source
    options that reach it as `user` (a login the block adds, db_owner; with `grants`, a
    least-privilege login granted SELECT on those objects only). With `tls`, the server
    has a test CA's certificate for localhost and the options connect through ODBC Driver 18
    with Encrypt=strict (TDS 8.0), the certificate pinned by ServerCertificate=."""
    login = ["sim", "login", "add", "--db", db, "--name", user, "--password", password]
    cli(*login, *([] if grants is not None else ["--db-owner"]))
    for granted in grants or ():
        cli("sim", "grant", "--db", db, "--login", user, "--object", granted)
    binary = os.environ.get("MSSQL_CDC_BIN", str(ROOT / "build" / "mssql-cdc"))
    serve = [binary, "sim", "serve", "--db", str(db), "--port", "0"]
    certs = Path(db).parent / "certs"
    if tls:
        cli("sim", "tls-cert", "--host", "localhost", "--out-dir", certs)
        serve += ["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key")]
    server = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline().strip()
        assert line.startswith("listening on "), line
        port = line.rsplit(":", 1)[1]
        database = info(cli, db)["database"]
        connection = f"Driver=FreeTDS;Server=127.0.0.1,{port};Database={database};Encrypt=no"
        if tls:
            # No Driver keyword: the Driver 18 of mssql-python-odbc, which the package finds itself.
            connection = (f"Server=localhost,{port};Database={database};Encrypt=strict;"
                          f"ServerCertificate={certs / 'server.pem'}")
        yield {"backend": "odbc", "user": user, "password": password, "connectionString": connection}
    finally:
        server.terminate()
        server.wait(timeout=30)
