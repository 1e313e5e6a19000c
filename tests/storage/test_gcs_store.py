"""What only Google Cloud Storage has, against fake-gcs-server (tests/storage/gcs_emulator.py):
the emulator's own ifGenerationMatch=0, and the input the engine refuses before it writes
anything. The core every store passes is in test_object_stores.py; the token flows of
Application Default Credentials are in gcs_test.cc.
"""

import json
import urllib.parse

import pytest

from emulator_process import free_port
from gcs_emulator import GcsEmulator
from store_helpers import make_db, place_name, refused, write_pipeline


@pytest.fixture(scope="module")
def gcs():
    emulator = GcsEmulator()
    yield emulator
    emulator.stop()


@pytest.fixture
def bucket(gcs, request):
    name = place_name(request)
    gcs.create(name)
    return name


def upload_if_absent(gcs, bucket, name, body):
    query = urllib.parse.urlencode({"uploadType": "media", "name": name, "ifGenerationMatch": 0})
    return gcs.request("POST", f"/upload/storage/v1/b/{bucket}/o?{query}", body)[0]


def test_the_emulator_refuses_a_second_upload_if_generation_match_0(gcs, bucket):
    assert upload_if_absent(gcs, bucket, "k", b"first") == 200
    assert upload_if_absent(gcs, bucket, "k", b"second") == 412
    assert gcs.request("GET", f"/storage/v1/b/{bucket}/o/k?alt=media") == (200, b"first")


@pytest.mark.parametrize("uri, message", [
    ("gs://no-such-bucket/lake/{ci}", "bucket 'no-such-bucket' does not exist"),
    ("gs://Not_A_Bucket/lake/{ci}", "is not a bucket name"),
    ("gcs://lake/{ci}", "the scheme 'gcs' names no store"),
])
def test_a_uri_no_store_can_open_is_refused_before_anything_is_written(gcs, bucket, tmp_path, uri, message):
    make_db(gcs, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, gcs.uri(bucket))
    pipeline.write_text(pipeline.read_text().replace(f"gs://{bucket}/lake/bronze/{{ci}}", uri))
    assert message in refused(gcs, tmp_path, pipeline)
    assert gcs.keys(bucket) == []


def test_two_emulator_addresses_that_disagree_are_refused(gcs, bucket, tmp_path):
    make_db(gcs, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, gcs.uri(bucket))
    env = gcs.env(CLOUD_STORAGE_EMULATOR_ENDPOINT="http://127.0.0.1:1")
    assert "name different emulators" in refused(gcs, tmp_path, pipeline, env=env)
    assert gcs.keys(bucket) == []


def test_missing_credentials_are_refused_before_anything_is_written(gcs, bucket, tmp_path):
    """Without an emulator the engine needs Google credentials: no key file, no gcloud login
    and no metadata server is one PermissionError naming the three."""
    make_db(gcs, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, gcs.uri(bucket))
    env = {k: v for k, v in gcs.env().items() if k != "STORAGE_EMULATOR_HOST"}
    env.update(HOME=str(tmp_path / "home"), CLOUDSDK_CONFIG=str(tmp_path / "gcloud"),
               GCE_METADATA_HOST=f"127.0.0.1:{free_port()}")
    line = refused(gcs, tmp_path, pipeline, env=env)
    assert "PermissionError" in line and "GOOGLE_APPLICATION_CREDENTIALS" in line, line


def test_a_credentials_file_of_another_kind_is_refused_naming_it(gcs, bucket, tmp_path):
    make_db(gcs, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, gcs.uri(bucket))
    key = tmp_path / "federated.json"
    key.write_text(json.dumps({"type": "external_account", "audience": "//iam/x"}))
    env = {k: v for k, v in gcs.env().items() if k != "STORAGE_EMULATOR_HOST"}
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    line = refused(gcs, tmp_path, pipeline, env=env)
    assert "external_account" in line and str(key) in line, line
