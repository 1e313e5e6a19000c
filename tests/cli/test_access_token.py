"""Logging in with an Entra ID access token (the accessToken option) from the shell: a token
login made with `sim login add --token-env`, served by `sim serve` over TLS, read by
`mssql-cdc run` through Microsoft ODBC Driver 18, which passes the token in LOGIN7's FEDAUTH
feature. A good token reads every table; an expired or unknown one is a PermissionError that
says so; the token never shows in output, logs or anything written."""

import base64
import json
import os
import subprocess
import time

import pytest

from helpers import BINARY, DRIVER_18, TABLES, SimServer, bronze_keys, change_table_keys, pipeline_text


def jwt(expires_in_seconds):
    """A token shaped like Entra ID's: header.claims.signature, base64url, with an `exp` claim."""
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    claims = {"aud": "https://database.windows.net/", "oid": "3f1c7a52-9b0e-4d8e-a1f2-5c6d7e8f9a0b",
              "exp": int(time.time()) + expires_in_seconds}
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJlLW9mLXRoZS10ZXN0"


GOOD = jwt(3600)
EXPIRED = jwt(-60)
UNKNOWN = jwt(3600).replace("c2lnbmF0dXJl", "b3RoZXItc2ln")


@pytest.fixture
def shop(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--transactions", 30, "--seed", 9)
    for name, token in (("etl_app", GOOD), ("old_app", EXPIRED)):
        added = subprocess.run([BINARY, "sim", "login", "add", "--db", str(db), "--name", name, "--token-env", "TOKEN",
                                "--db-owner"], env=dict(os.environ, TOKEN=token), capture_output=True, text=True)
        assert added.returncode == 0, added.stderr
        assert token not in added.stdout + added.stderr
    return db


@pytest.fixture
def server(cli, shop, tmp_path):
    certs = tmp_path / "certs"
    cli("sim", "tls-cert", "--host", "localhost", "--out-dir", certs)
    running = SimServer(shop, "--tls-cert", certs / "server.pem", "--tls-key", certs / "server.key")
    running.ca = certs / "ca.pem"
    yield running
    running.stop()


def run(tmp_path, server, token):
    source = (f'connectionString = "Driver={{{DRIVER_18}}};Server=localhost,{server.port};Database=sim;Encrypt=yes"\n'
              f'accessToken_env = "ENTRA_TOKEN"\nmaxCommitsPerBatch = 10')
    (tmp_path / "pipeline.toml").write_text(pipeline_text("availableNow", source, backend="odbc"))
    env = dict(os.environ, ENTRA_TOKEN=token, SSL_CERT_FILE=str(server.ca))
    return subprocess.run([BINARY, "run", "--json", str(tmp_path / "pipeline.toml")], capture_output=True, text=True,
                          timeout=300, env=env)


def written_bytes(root):
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_a_token_login_reads_every_table_and_the_token_is_nowhere(shop, server, tmp_path):
    result = run(tmp_path, server, GOOD)
    assert result.returncode == 0, result.stderr
    for ci in TABLES:
        assert sorted(bronze_keys(tmp_path / "lake" / "bronze" / ci)) == sorted(change_table_keys(shop, ci)), ci
    _, served, log = server.stop()
    assert "login 'etl_app' (db owner) connected" in log
    for text in (result.stdout, result.stderr, served, log):
        assert GOOD not in text
    assert GOOD.encode() not in written_bytes(tmp_path / "lake") + written_bytes(tmp_path / "checkpoints")
    assert GOOD.encode() not in shop.read_bytes()  # the simulator keeps a digest only


@pytest.mark.parametrize("token, says", [(EXPIRED, "Token is expired"), (UNKNOWN, "Login failed")])
def test_an_expired_or_unknown_token_is_a_permission_error_before_anything_is_written(server, tmp_path, token, says):
    result = run(tmp_path, server, token)
    assert result.returncode == 2, result.stderr
    assert "PermissionError" in result.stderr and "access token" in result.stderr, result.stderr
    assert says in result.stderr, result.stderr
    assert token not in result.stdout + result.stderr
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()


def test_bad_token_input_is_one_error_before_anything_is_written(cli, shop, server, tmp_path):
    cases = [
        ('accessToken_env = "ENTRA_TOKEN"\nuser = "reader"', "together with user or password"),
        ('accessToken = "Bearer abc"', "give the token alone"),
    ]
    for extra, message in cases:
        source = (f'connectionString = "Driver={{{DRIVER_18}}};Server=localhost,{server.port};Encrypt=yes"\n{extra}')
        (tmp_path / "pipeline.toml").write_text(pipeline_text("availableNow", source, backend="odbc"))
        result = subprocess.run([BINARY, "run", str(tmp_path / "pipeline.toml")], capture_output=True, text=True,
                                timeout=120, env=dict(os.environ, ENTRA_TOKEN=GOOD))
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert GOOD not in result.stderr and not (tmp_path / "lake").exists()
    freetds = (f'connectionString = "Driver=FreeTDS;Server=127.0.0.1,{server.port}"\naccessToken_env = "ENTRA_TOKEN"')
    (tmp_path / "pipeline.toml").write_text(pipeline_text("availableNow", freetds, backend="odbc"))
    result = subprocess.run([BINARY, "run", str(tmp_path / "pipeline.toml")], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, ENTRA_TOKEN=GOOD))
    assert result.returncode == 2 and "needs ODBC Driver 18" in result.stderr, result.stderr
    assert not (tmp_path / "lake").exists()

    unset = cli("sim", "login", "add", "--db", shop, "--name", "x", "--token-env", "NO_SUCH_VAR_9", check=False)
    assert unset.returncode != 0 and "NO_SUCH_VAR_9, which is not set" in unset.stderr
    again = subprocess.run([BINARY, "sim", "login", "add", "--db", str(shop), "--name", "twin", "--token-env", "T"],
                           env=dict(os.environ, T=GOOD), capture_output=True, text=True)
    assert again.returncode != 0 and "already belongs to login etl_app" in again.stderr
    assert GOOD not in again.stderr
