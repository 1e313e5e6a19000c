"""What only Azure Blob storage has, against Azurite (tests/storage/azure_emulator.py): the
emulator's own conditional creates, the abfss:// form, a SAS token, a wrong key, and the input
the engine refuses before it writes anything. The core every store passes is in
test_object_stores.py.
"""

import base64
import hashlib
import hmac
import urllib.parse

import pytest
from deltalake import DeltaTable

from azure_emulator import ACCOUNT, KEY, AzureEmulator
from store_helpers import bronze_keys, make_db, place_name, refused, run, summary, write_pipeline

WRONG_KEY = base64.b64encode(b"w" * 64).decode()
SECRETS = (KEY, WRONG_KEY)


@pytest.fixture(scope="module")
def azure():
    emulator = AzureEmulator()
    yield emulator
    emulator.stop()


@pytest.fixture
def container(azure, request):
    name = place_name(request)
    azure.create(name)
    return name


def account_sas(permissions="racwdl"):
    """An account SAS token for the blob service, signed with the development key."""
    version, expiry = "2021-10-04", "2099-01-01T00:00:00Z"
    to_sign = "\n".join([ACCOUNT, permissions, "b", "sco", "", expiry, "", "", version, ""]) + "\n"
    signature = base64.b64encode(hmac.new(base64.b64decode(KEY), to_sign.encode(),
                                          hashlib.sha256).digest()).decode()
    return urllib.parse.urlencode({"sv": version, "ss": "b", "srt": "sco", "sp": permissions,
                                   "se": expiry, "sig": signature}, quote_via=urllib.parse.quote, safe="")


def test_the_emulator_refuses_a_second_conditional_create(azure, container):
    assert azure.request("PUT", f"{container}/k", b"first", {"x-ms-blob-type": "BlockBlob",
                                                             "If-None-Match": "*"}) == (201, None)
    assert azure.request("PUT", f"{container}/k", b"second", {"x-ms-blob-type": "BlockBlob",
                                                              "If-None-Match": "*"}) == (409, "BlobAlreadyExists")
    with azure.fs.open_input_stream(f"{container}/k") as stream:
        assert stream.read() == b"first"


def test_abfss_uris_and_a_sas_token(azure, container, tmp_path):
    """The Hadoop form of a URI names the account itself; a SAS token stands in for the key."""
    make_db(azure, tmp_path, transactions=30)
    root = f"abfss://{container}@{ACCOUNT}.dfs.core.windows.net"
    pipeline = write_pipeline(tmp_path, root, tables='tables = ["dbo_orders"]')
    sas = (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};SharedAccessSignature={account_sas()};"
           f"BlobEndpoint={azure.endpoint};")
    result = run(azure, "run", "--json", pipeline, env=azure.env(AZURE_STORAGE_CONNECTION_STRING=sas))
    assert summary(result)["failed"] == []
    assert "sig=" not in result.stderr + result.stdout
    assert bronze_keys(azure, root, "dbo_orders")
    facts = DeltaTable(f"{root}/lake/ops/facts", storage_options=azure.storage_options())
    assert facts.to_pyarrow_table().num_rows >= 1


def test_a_wrong_key_is_refused_in_one_line_naming_no_key(azure, container, tmp_path):
    make_db(azure, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, azure.uri(container))
    env = azure.env(AZURE_STORAGE_CONNECTION_STRING=azure.connection_string(key=WRONG_KEY))
    line = refused(azure, tmp_path, pipeline, env=env, secrets=SECRETS)
    assert "PermissionError" in line and "key" in line, line
    assert azure.keys(container) == []


@pytest.mark.parametrize("uri, message", [
    ("az://no-such-container/lake/{ci}", "container 'no-such-container' of account"),
    ("az://Not_A_Container/lake/{ci}", "is not a container name"),
    ("abfss://lake@devstoreaccount1.example.com/{ci}", "the host must be"),
    ("abfss://lake@otheraccount.dfs.core.windows.net/{ci}", "names the storage account 'otheraccount'"),
    ("abfs://lake@devstoreaccount1.dfs.core.windows.net/{ci}", "the scheme 'abfs' names no store"),
])
def test_a_uri_no_store_can_open_is_refused_before_anything_is_written(azure, container, tmp_path, uri, message):
    make_db(azure, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, azure.uri(container))
    pipeline.write_text(pipeline.read_text().replace(f"az://{container}/lake/bronze/{{ci}}", uri))
    assert message in refused(azure, tmp_path, pipeline, secrets=SECRETS)
    assert azure.keys(container) == []


@pytest.mark.parametrize("settings, message", [
    ({}, "names no storage account"),
    ({"AZURE_STORAGE_ACCOUNT": ACCOUNT}, "no Azure Storage credentials"),
    ({"AZURE_STORAGE_KEY": KEY}, "names no storage account"),
    ({"AZURE_STORAGE_ACCOUNT": ACCOUNT, "AZURE_STORAGE_KEY": KEY, "AZURE_STORAGE_SAS_TOKEN": "sv=x&sig=y"},
     "both an account key and a SAS token"),
    ({"AZURE_STORAGE_ACCOUNT": ACCOUNT, "AZURE_STORAGE_KEY": "not base64!"}, "is not base64"),
])
def test_missing_or_ambiguous_settings_are_refused_before_anything_is_written(
        azure, container, tmp_path, settings, message):
    make_db(azure, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, azure.uri(container))
    env = {k: v for k, v in azure.env().items() if not k.startswith("AZURE_")}
    env.update(settings)
    assert message in refused(azure, tmp_path, pipeline, env=env, secrets=SECRETS)
    assert azure.keys(container) == []


def test_a_connection_string_beside_another_setting_is_refused(azure, container, tmp_path):
    make_db(azure, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, azure.uri(container))
    line = refused(azure, tmp_path, pipeline, env=azure.env(AZURE_STORAGE_KEY=KEY), secrets=SECRETS)
    assert "set one of the two ways only" in line
    assert azure.keys(container) == []
