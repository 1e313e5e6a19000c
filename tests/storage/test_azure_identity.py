"""Azure identities instead of keys: a service principal's secret, workload identity, and the
managed identity of a VM (the instance metadata service) and of App Service. Azurite serves
https and takes bearer tokens (azure_emulator.py); entra_token_server.py stands in for the
places tokens come from. Both the engine's own commit requests and Arrow's data files are
authorized by the identity, and the input that names no identity, or two, is refused before
anything is written."""

import pytest

from azure_emulator import ACCOUNT, KEY, AzureEmulator, tls_certificate
from entra_token_server import (CLIENT_ID, CLIENT_SECRET, FEDERATED_TOKEN, IDENTITY_HEADER, TENANT,
                                EntraTokenServer)
from store_helpers import (assert_bronze_equals_change_tables, make_db, place_name, refused, run,
                           write_pipeline)

TABLES = 'tables = ["dbo_orders"]'


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    """Azurite over https with bearer tokens, and the token endpoints, sharing one certificate
    whose authority this process (delta-rs, pyarrow) trusts too while the module runs."""
    authority, cert, key = tls_certificate(tmp_path_factory.mktemp("tls"))
    patch = pytest.MonkeyPatch()
    patch.setenv("SSL_CERT_FILE", str(authority))
    azure = AzureEmulator(tls=(authority, cert, key))
    tokens = EntraTokenServer(cert, key)
    yield azure, tokens
    tokens.stop()
    azure.stop()
    patch.undo()


def identity_env(azure, **identity):
    """The engine's environment: the emulator's address and account in a connection string
    without a key, and the identity's variables."""
    return azure.env(**{"AZURE_STORAGE_CONNECTION_STRING": f"AccountName={ACCOUNT};BlobEndpoint={azure.endpoint}",
                        **identity})


def identities(tokens, token_file):
    return {
        "service principal": dict(AZURE_TENANT_ID=TENANT, AZURE_CLIENT_ID=CLIENT_ID,
                                  AZURE_CLIENT_SECRET=CLIENT_SECRET, AZURE_AUTHORITY_HOST=tokens.url),
        "workload identity": dict(AZURE_TENANT_ID=TENANT, AZURE_CLIENT_ID=CLIENT_ID,
                                  AZURE_FEDERATED_TOKEN_FILE=str(token_file), AZURE_AUTHORITY_HOST=tokens.url),
        "VM managed identity": dict(AZURE_TOKEN_CREDENTIALS="ManagedIdentityCredential",
                                    AZURE_POD_IDENTITY_AUTHORITY_HOST=tokens.url),
        "App Service managed identity": dict(IDENTITY_ENDPOINT=tokens.url + "/msi/token",
                                             IDENTITY_HEADER=IDENTITY_HEADER),
    }


KINDS = {"service principal": "secret", "workload identity": "workload",
         "VM managed identity": "imds", "App Service managed identity": "app-service"}


@pytest.mark.parametrize("identity", list(KINDS))
def test_an_identity_streams_into_the_store(secure, identity, request, tmp_path):
    azure, tokens = secure
    container = place_name(request)
    azure.create(container)
    token_file = tmp_path / "federated-token"
    token_file.write_text(FEDERATED_TOKEN)
    db = make_db(azure, tmp_path, transactions=20)
    pipeline = write_pipeline(tmp_path, f"az://{container}", tables=TABLES)
    before = len(tokens.requests)
    env = identity_env(azure, **identities(tokens, token_file)[identity])
    run(azure, "run", pipeline, env=env)
    fetched = tokens.requests[before:]
    # The engine's commit requests and Arrow's data files each fetched a token of this identity.
    assert {agent for kind, agent in fetched if kind == KINDS[identity]} >= {"mssql-cdc"}, fetched
    assert any(agent.startswith("azsdk-cpp") for kind, agent in fetched if kind == KINDS[identity]), fetched
    assert {kind for kind, _ in fetched} == {KINDS[identity]}, fetched
    assert_bronze_equals_change_tables(azure, f"az://{container}", db, tables=["dbo_orders"])
    assert any(key.startswith("lake/bronze/dbo_orders/_delta_log/") for key in azure.keys(container))


def test_identity_settings_that_are_wrong_or_twofold_are_refused(secure, request, tmp_path):
    azure, tokens = secure
    container = place_name(request)
    azure.create(container)
    make_db(azure, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, f"az://{container}", tables=TABLES)
    secret = dict(AZURE_TENANT_ID=TENANT, AZURE_CLIENT_ID=CLIENT_ID, AZURE_CLIENT_SECRET=CLIENT_SECRET,
                  AZURE_AUTHORITY_HOST=tokens.url)
    token_file = tmp_path / "federated-token"
    token_file.write_text(FEDERATED_TOKEN)
    cases = [
        (dict(secret, AZURE_CLIENT_SECRET="not-the-secret"),
         "the token endpoint refused the service principal " + CLIENT_ID),
        (dict(secret, AZURE_STORAGE_CONNECTION_STRING=azure.connection_string()),
         "both an account key (AZURE_STORAGE_CONNECTION_STRING) and the service principal"),
        (dict(secret, AZURE_FEDERATED_TOKEN_FILE=str(token_file)),
         "both AZURE_CLIENT_SECRET and AZURE_FEDERATED_TOKEN_FILE are set"),
        (dict(secret, AZURE_TENANT_ID=""), "AZURE_CLIENT_SECRET needs AZURE_TENANT_ID"),
        (dict(secret, AZURE_AUTHORITY_HOST="http://127.0.0.1:1/"), "AZURE_AUTHORITY_HOST must be an https://"),
        (dict(AZURE_TOKEN_CREDENTIALS="AzureCliCredential"), "'AzureCliCredential' is not one the engine takes"),
        (dict(AZURE_TOKEN_CREDENTIALS="ManagedIdentityCredential", MSI_ENDPOINT="http://127.0.0.1:1/"),
         "MSI_ENDPOINT is set"),
        (dict(IDENTITY_ENDPOINT=tokens.url + "/msi/token", IDENTITY_HEADER="wrong"),
         "the token endpoint refused the system-assigned managed identity"),
    ]
    for identity, says in cases:
        env = identity_env(azure, **identity)
        line = refused(azure, tmp_path, pipeline, env=env,
                       secrets=(CLIENT_SECRET, "not-the-secret", IDENTITY_HEADER, FEDERATED_TOKEN, KEY))
        assert says in line, (identity, line)
    # An identity's token is sent over https only.
    env = identity_env(azure, **secret)
    env["AZURE_STORAGE_CONNECTION_STRING"] = f"AccountName={ACCOUNT};BlobEndpoint=http://127.0.0.1:1/{ACCOUNT}"
    assert "only sent over https" in refused(azure, tmp_path, pipeline, env=env)
    assert azure.keys(container) == []
