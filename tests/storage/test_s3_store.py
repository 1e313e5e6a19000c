"""What only S3 has, against moto's S3 server (tests/storage/s3_emulator.py): the emulator's
own conditional writes, a server that checks every signature, a store that ignores
If-None-Match, and the input the engine refuses before it writes anything. The core every store
passes is in test_object_stores.py.
"""

import http.server
import subprocess
import sys
import threading

import botocore.exceptions
import pytest

from s3_emulator import S3Emulator
from store_helpers import bronze_keys, make_db, place_name, refused, run, summary, write_pipeline

SECRETS = ("testing-secret",)


@pytest.fixture(scope="module")
def s3():
    emulator = S3Emulator()
    yield emulator
    emulator.stop()


@pytest.fixture
def bucket(s3, request):
    name = place_name(request)
    s3.create(name)
    return name


def test_the_emulator_refuses_a_second_conditional_create(s3, bucket):
    client = s3.client()
    client.put_object(Bucket=bucket, Key="k", Body=b"first", IfNoneMatch="*")
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        client.put_object(Bucket=bucket, Key="k", Body=b"second", IfNoneMatch="*")
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"


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


@pytest.mark.parametrize("uri, message", [
    ("hdfs://namenode/lake/{ci}", "the scheme 'hdfs' names no store"),
    ("s3://Not_A_Bucket/lake/{ci}", "is not a bucket name"),
    ("s3://no-such-bucket/lake/{ci}", "bucket 'no-such-bucket' does not exist"),
])
def test_a_uri_no_store_can_open_is_refused_before_anything_is_written(s3, bucket, tmp_path, uri, message):
    make_db(s3, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, s3.uri(bucket))
    pipeline.write_text(pipeline.read_text().replace(f"s3://{bucket}/lake/bronze/{{ci}}", uri))
    assert message in refused(s3, tmp_path, pipeline, secrets=SECRETS)
    assert s3.keys(bucket) == []


def test_missing_credentials_are_refused_before_anything_is_written(s3, bucket, tmp_path):
    make_db(s3, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, s3.uri(bucket))
    env = {k: v for k, v in s3.env().items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    env["AWS_SHARED_CREDENTIALS_FILE"] = env["AWS_CONFIG_FILE"] = str(tmp_path / "none")
    line = refused(s3, tmp_path, pipeline, env=env, secrets=SECRETS)
    assert "credentials" in line
    assert s3.keys(bucket) == []


APPEND_PAST_A_CHECKPOINT = """
import sys
import pyarrow as pa
from mssql_cdc import _core
_core.delta_create(sys.argv[1], pa.schema([("n", pa.int64())]))
for i in range(13):
    _core.delta_append(sys.argv[1], pa.table({"n": [i]}))
"""


def test_a_store_that_checks_signatures_takes_ours_and_refuses_a_wrong_secret(tmp_path):
    """Against a server that checks every signature (moto with IAM): the engine's own signed
    requests, the conditional creates and deletes, pass; a wrong secret is refused in one line
    that names neither secret, before anything is written."""
    checking = S3Emulator(authenticating=True)
    try:
        checking.client().create_bucket(Bucket="signed")
        make_db(checking, tmp_path, transactions=20)
        pipeline = write_pipeline(tmp_path, "s3://signed")
        assert summary(run(checking, "run", "--json", pipeline))["failed"] == []
        assert bronze_keys(checking, "s3://signed", "dbo_orders")
        # Past its first checkpoint a table opens by a listing that starts after it: a signed
        # request with a query, checked too.
        appended = subprocess.run([sys.executable, "-c", APPEND_PAST_A_CHECKPOINT, "s3://signed/appended"],
                                  env=checking.env(), capture_output=True, text=True, timeout=300)
        assert appended.returncode == 0, appended.stderr
        checking.log.seek(0)
        assert b"start-after=appended" in checking.log.read()
        wrong = checking.env(AWS_SECRET_ACCESS_KEY="testing-secret")
        written = checking.keys("signed")
        other = write_pipeline(tmp_path, "s3://signed")
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
        pipeline = write_pipeline(tmp_path, "s3://plain-store")
        env = s3.env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{server.server_address[1]}")
        line = refused(s3, tmp_path, pipeline, env=env, secrets=SECRETS)
        assert "does not honour conditional writes" in line
        # Only the probe was written, and it was deleted again.
        puts = [path for method, path in StoreWithoutPreconditions.requests if method == "PUT"]
        assert puts and all("_mssql_cdc_conditional_write_probe_" in p for p in puts)
        deletes = [path for method, path in StoreWithoutPreconditions.requests if method == "DELETE"]
        assert set(deletes) == set(puts)
    finally:
        server.shutdown()
