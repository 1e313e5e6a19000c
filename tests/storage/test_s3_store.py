"""The native engine on S3, against moto's S3 server (tests/storage/s3_emulator.py): the
emulator's conditional writes first, then streams, bootstrap, many tables and data loss with
every table and checkpoint in the bucket, two runs racing on one pipeline, two processes
appending to one table through the Python bindings, SIGKILLs under a workload, a server that
checks every signature, and the input the engine refuses before it writes anything.

Every table is read back from the emulator by delta-rs.
"""

import collections
import http.server
import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import botocore.exceptions
import pytest
from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from helpers import BINARY, TABLES, change_table_keys, run_then_kill  # noqa: E402
from s3_emulator import S3Emulator  # noqa: E402
from sim_workload import stop_workload  # noqa: E402


@pytest.fixture(scope="module")
def s3():
    emulator = S3Emulator()
    yield emulator
    emulator.stop()


@pytest.fixture
def bucket(s3, request):
    name = "lake-" + "".join(c for c in request.node.name.lower() if c.isalnum())[:40]
    s3.client().create_bucket(Bucket=name)
    return name


def run(s3, *args, env=None, check=True, timeout=300):
    result = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True,
                            env=env or s3.env(), timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"mssql-cdc {' '.join(map(str, args))} failed:\n{result.stderr}")
    return result


def make_db(s3, tmp_path, transactions=150, manual_clock=False):
    db = tmp_path / "shop.sim"
    clock = ["--clock", "manual", "--start", "2026-01-01 00:00:00"] if manual_clock else []
    run(s3, "sim", "create", "--db", db, *clock)
    run(s3, "sim", "demo-schema", "--db", db)
    run(s3, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", transactions,
        "--seed", 3, "--statements", 2)
    return db


def write_pipeline(tmp_path, bucket, trigger="availableNow", source="", stream="", tables=None):
    lake = f"s3://{bucket}/lake"
    tables_text = tables if tables is not None else "tables = " + json.dumps(TABLES)
    path = tmp_path / "pipeline.toml"
    path.write_text(f"""{tables_text}

[source]
backend = "sim"
simPath = "shop.sim"
{source}

[stream]
target = "{lake}/bronze/{{ci}}"
app_id = "{{ci}}-v1"
checkpoint = "s3://{bucket}/checkpoints/{{ci}}"
facts_table = "{lake}/ops/facts"
control_table = "{lake}/ops/control"
trigger = "{trigger}"
{stream}
""")
    return path


def summary(result):
    return json.loads(result.stdout.splitlines()[-1])


def bronze_keys(s3, bucket, ci):
    table = DeltaTable(f"s3://{bucket}/lake/bronze/{ci}", storage_options=s3.storage_options())
    rows = table.to_pyarrow_table(columns=["_start_lsn", "_seqval", "_operation"]).to_pylist()
    return [(r["_start_lsn"], r["_seqval"], r["_operation"]) for r in rows if r["_operation"] != 0]


def assert_bronze_equals_change_tables(s3, bucket, db):
    for ci in TABLES:
        source = change_table_keys(db, ci)
        bronze = bronze_keys(s3, bucket, ci)
        assert source, ci
        duplicates = [k for k, n in collections.Counter(bronze).items() if n > 1]
        assert not duplicates, (ci, duplicates[:5])
        assert sorted(bronze) == sorted(source), ci


def test_the_emulator_refuses_a_second_conditional_create(s3, bucket):
    client = s3.client()
    client.put_object(Bucket=bucket, Key="k", Body=b"first", IfNoneMatch="*")
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        client.put_object(Bucket=bucket, Key="k", Body=b"second", IfNoneMatch="*")
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"


def test_streams_with_tables_and_checkpoints_in_s3(s3, bucket, tmp_path):
    db = make_db(s3, tmp_path)
    pipeline = write_pipeline(tmp_path, bucket, source="maxCommitsPerBatch = 40")
    first = summary(run(s3, "run", "--json", pipeline))
    assert first["failed"] == [] and all(t["batches"] >= 1 for t in first["tables"].values())
    run(s3, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 60, "--seed", 4)
    second = summary(run(s3, "run", "--json", pipeline))
    assert second["failed"] == []
    assert_bronze_equals_change_tables(s3, bucket, db)
    # Nothing local: every table and checkpoint is in the bucket.
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()
    keys = s3.keys(bucket)
    for ci in TABLES:
        assert f"checkpoints/{ci}/stream.json" in keys
        assert any(k.startswith(f"checkpoints/{ci}/commits/") for k in keys)
    facts = DeltaTable(f"s3://{bucket}/lake/ops/facts", storage_options=s3.storage_options())
    rows = facts.to_pyarrow_table().to_pylist()
    per_batch = collections.Counter((r["app_id"], r["batch_id"]) for r in rows if r["event"] is None)
    assert per_batch and max(per_batch.values()) == 1
    status = run(s3, "status", "--json", pipeline, check=False)
    assert status.returncode in (0, 1), status.stderr
    doc = json.loads(status.stdout)
    assert [t["capture_instance"] for t in doc["tables"]] == TABLES
    assert all(t["facts_rows"] >= 1 for t in doc["tables"])


def test_bootstrap_into_s3_takes_the_rows_then_the_changes(s3, bucket, tmp_path):
    db = make_db(s3, tmp_path)
    pipeline = write_pipeline(tmp_path, bucket, stream="bootstrap = true",
                              tables='tables = ["dbo_customers"]')
    run(s3, "run", "--json", pipeline)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        customers = conn.execute('SELECT COUNT(*) FROM "dbo.customers"').fetchone()[0]
    run(s3, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 40, "--seed", 9)
    run(s3, "run", "--json", pipeline)
    table = DeltaTable(f"s3://{bucket}/lake/bronze/dbo_customers", storage_options=s3.storage_options())
    rows = table.to_pyarrow_table().to_pylist()
    assert sum(1 for r in rows if r["_operation"] == 0) == customers
    changes = [r for r in rows if r["_operation"] != 0]
    assert changes and min(r["_start_lsn"] for r in changes) > max(
        r["_start_lsn"] for r in rows if r["_operation"] == 0)


def test_data_loss_fails_the_table_and_commits_no_batch_of_it(s3, bucket, tmp_path):
    db = make_db(s3, tmp_path, manual_clock=True)
    run(s3, "sim", "clock", "--db", db, "--advance", 7200)
    run(s3, "sim", "idle", "--db", db)
    run(s3, "sim", "cleanup", "--db", db, "--retention-minutes", 60)
    pipeline = write_pipeline(
        tmp_path, bucket,
        tables='[tables.dbo_customers]\n\n[tables.dbo_orders]\nstartingLsn = "0x00000000000000000001"\n')
    result = run(s3, "run", pipeline, check=False)
    assert result.returncode == 1
    failed = [line for line in result.stderr.splitlines() if "DataLossError" in line]
    assert failed and all("dbo_orders" in line for line in failed), result.stderr
    keys = s3.keys(bucket)
    assert any(k.startswith("checkpoints/dbo_customers/") for k in keys)
    assert not any(k.startswith("checkpoints/dbo_orders/commits/") for k in keys)


def test_two_runs_racing_on_one_pipeline_never_both_write_a_batch(s3, bucket, tmp_path):
    db = make_db(s3, tmp_path, transactions=50)
    pipeline = write_pipeline(tmp_path, bucket, trigger="processingTime=100 ms",
                              source="maxCommitsPerBatch = 10")
    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", "11"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    runs = []
    try:
        for _ in range(2):
            runs.append(subprocess.Popen([BINARY, "run", "--json", str(pipeline)], env=s3.env(),
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        time.sleep(8)
    finally:
        stop_workload(workload)
    outcomes = []
    for process in runs:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        outcomes.append((process.returncode, err))
    # Nothing locks an object-store checkpoint: a run that finds the other ahead of it stops
    # that table before it writes (the batch's offsets another run planned, a commit another
    # run made first, or bronze ahead of its checkpoint); no other failure is acceptable.
    refusals = ("CheckpointInUseError", "ConcurrentModificationError", "disagree about app_id")
    for code, err in outcomes:
        assert code in (0, 1, 3), err
        for line in err.splitlines():
            if "failed" in line and "Error" in line:
                assert any(r in line for r in refusals), line
    final = write_pipeline(tmp_path, bucket, source="maxCommitsPerBatch = 500")
    assert summary(run(s3, "run", "--json", final))["failed"] == []
    assert_bronze_equals_change_tables(s3, bucket, db)
    for ci in TABLES:
        table = DeltaTable(f"s3://{bucket}/lake/bronze/{ci}", storage_options=s3.storage_options())
        versions = [h["version"] for h in table.history()]
        assert sorted(versions) == list(range(len(versions))), ci


def test_sigkill_twenty_times_under_a_workload_loses_and_duplicates_nothing(s3, bucket, tmp_path):
    seed = random.randrange(1 << 30)
    print("kill schedule seed", seed)
    rng = random.Random(seed)
    db = make_db(s3, tmp_path, transactions=20)
    pipeline = write_pipeline(tmp_path, bucket, trigger="processingTime=100 ms",
                              source="maxCommitsPerBatch = 25")
    workload = subprocess.Popen(
        [BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
         "--statements", "3", "--seed", str(seed)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    exits = collections.Counter()
    try:
        for _ in range(20):
            exits[run_then_kill(pipeline, rng, low=0.3, env=s3.env())] += 1
        assert exits[-signal.SIGKILL] >= 10, exits
    finally:
        stop_workload(workload)
    final = write_pipeline(tmp_path, bucket, source="maxCommitsPerBatch = 500")
    assert summary(run(s3, "run", "--json", final))["failed"] == []
    assert_bronze_equals_change_tables(s3, bucket, db)
    # A kill mid-batch leaves data files no commit names; the next run deletes them.
    for ci in TABLES:
        table = DeltaTable(f"s3://{bucket}/lake/bronze/{ci}", storage_options=s3.storage_options())
        named = {uri.rsplit("/", 1)[1] for uri in table.file_uris()}
        stored = {k.rsplit("/", 1)[1] for k in s3.keys(bucket, f"lake/bronze/{ci}/")
                  if k.endswith(".parquet") and "/_delta_log/" not in k}
        assert stored == named, (ci, sorted(stored - named)[:5])


class StoreWithoutPreconditions(http.server.BaseHTTPRequestHandler):
    """An S3-like store that ignores If-None-Match, as some S3-compatible stores do: every
    request succeeds, and each one is recorded."""
    requests = []

    def answer(self, status, body=b""):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        StoreWithoutPreconditions.requests.append((self.command, self.path))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.answer(200)

    def do_PUT(self):
        self.answer(200)

    def do_DELETE(self):
        self.answer(204)

    def do_GET(self):
        self.answer(404)

    def log_message(self, *args):
        pass


def refused(s3, tmp_path, pipeline, env=None):
    """Runs the pipeline, expecting one clear refusal before anything is written: exit status
    2, one line, no local directory made, and no secret in any output."""
    result = run(s3, "run", pipeline, env=env, check=False)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("mssql-cdc:")]
    assert len(lines) == 1, result.stderr
    assert "testing-secret" not in result.stderr + result.stdout
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()
    return lines[0]


@pytest.mark.parametrize("uri, message", [
    ("hdfs://namenode/lake/{ci}", "the scheme 'hdfs' names no store"),
    ("s3://Not_A_Bucket/lake/{ci}", "is not a bucket name"),
    ("s3://no-such-bucket/lake/{ci}", "bucket 'no-such-bucket' does not exist"),
])
def test_a_uri_no_store_can_open_is_refused_before_anything_is_written(s3, bucket, tmp_path, uri, message):
    make_db(s3, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, bucket)
    pipeline.write_text(pipeline.read_text().replace(f"s3://{bucket}/lake/bronze/{{ci}}", uri))
    assert message in refused(s3, tmp_path, pipeline)
    assert s3.keys(bucket) == []


def test_missing_credentials_are_refused_before_anything_is_written(s3, bucket, tmp_path):
    make_db(s3, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, bucket)
    env = {k: v for k, v in s3.env().items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    env["AWS_SHARED_CREDENTIALS_FILE"] = env["AWS_CONFIG_FILE"] = str(tmp_path / "none")
    line = refused(s3, tmp_path, pipeline, env=env)
    assert "credentials" in line
    assert s3.keys(bucket) == []


def test_a_store_that_checks_signatures_takes_ours_and_refuses_a_wrong_secret(tmp_path):
    """Against a server that checks every signature (moto with IAM): the engine's own signed
    requests, the conditional creates and deletes, pass; a wrong secret is refused in one line
    that names neither secret, before anything is written."""
    checking = S3Emulator(authenticating=True)
    try:
        checking.client().create_bucket(Bucket="signed")
        make_db(checking, tmp_path, transactions=20)
        pipeline = write_pipeline(tmp_path, "signed")
        assert summary(run(checking, "run", "--json", pipeline))["failed"] == []
        assert bronze_keys(checking, "signed", "dbo_orders")
        wrong = checking.env(AWS_SECRET_ACCESS_KEY="testing-secret")
        written = checking.keys("signed")
        other = write_pipeline(tmp_path, "signed")
        other.write_text(other.read_text().replace("s3://signed/", "s3://signed/other/"))
        result = run(checking, "run", other, env=wrong, check=False)
        assert result.returncode == 2, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.startswith("mssql-cdc:")]
        assert len(lines) == 1 and "PermissionError" in lines[0] and "credentials" in lines[0], result.stderr
        secret = checking.credentials["AWS_SECRET_ACCESS_KEY"]
        assert "testing-secret" not in result.stderr + result.stdout
        assert secret not in result.stderr + result.stdout
        assert checking.keys("signed") == written
    finally:
        checking.stop()


def test_a_store_that_ignores_conditional_writes_is_refused(s3, tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StoreWithoutPreconditions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        make_db(s3, tmp_path, transactions=5)
        pipeline = write_pipeline(tmp_path, "plain-store")
        env = s3.env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{server.server_address[1]}")
        line = refused(s3, tmp_path, pipeline, env=env)
        assert "does not honour conditional writes" in line
        # Only the probe was written, and it was deleted again.
        puts = [path for method, path in StoreWithoutPreconditions.requests if method == "PUT"]
        assert puts and all("_mssql_cdc_conditional_write_probe_" in p for p in puts)
        deletes = [path for method, path in StoreWithoutPreconditions.requests if method == "DELETE"]
        assert set(deletes) == set(puts)
    finally:
        server.shutdown()


APPENDER = """
import sys
import pyarrow as pa
from mssql_cdc import _core
uri, writer, appends = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(appends):
    _core.delta_append(uri, pa.table({"writer": [writer], "n": [i]}))
"""


def test_two_processes_appending_to_one_table_never_both_win_a_version(s3, bucket):
    """The Python bindings' appends, from two processes at once: every append lands in a
    version of its own, none is lost, and the log has no gap."""
    uri = f"s3://{bucket}/lake/raced"
    env = s3.env()
    appends = 12
    creator = subprocess.run(
        [sys.executable, "-c", "import sys, pyarrow as pa; from mssql_cdc import _core; "
         "_core.delta_create(sys.argv[1], pa.schema([('writer', pa.int64()), ('n', pa.int64())]))", uri],
        env=env, capture_output=True, text=True, timeout=120)
    assert creator.returncode == 0, creator.stderr
    writers = [subprocess.Popen([sys.executable, "-c", APPENDER, uri, str(w), str(appends)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for w in range(2)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    table = DeltaTable(uri, storage_options=s3.storage_options())
    rows = sorted((r["writer"], r["n"]) for r in table.to_pyarrow_table().to_pylist())
    assert rows == sorted((w, i) for w in range(2) for i in range(appends))
    assert sorted(h["version"] for h in table.history()) == list(range(2 * appends + 1))
