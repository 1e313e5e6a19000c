"""Encrypted connections from the shell: `sim tls-cert` makes a test CA and a certificate,
`sim serve --tls-cert/--tls-key` encrypts with it, FreeTDS and Microsoft ODBC Driver 18 (as
PyPI ships it) connect through isql, and `mssql-cdc run` reads through the seed's connection
string (`Server=...;Database=...;Encrypt=yes`) with the CA trusted the way a private CA is."""

import json
import os
import stat
import subprocess

import pytest

from helpers import BINARY, DRIVER_18, TABLES, SimServer as Server, bronze_keys, change_table_keys, pipeline_text

PASSWORD = "Tls-pw-1!"


@pytest.fixture
def certs(cli, tmp_path):
    made = cli("sim", "tls-cert", "--host", "localhost", "--out-dir", tmp_path / "certs")
    assert "localhost" in made.stdout
    return tmp_path / "certs"


@pytest.fixture
def shop(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--transactions", 40, "--seed", 5)
    cli("sim", "login", "add", "--db", db, "--name", "reader", "--password", PASSWORD, "--db-owner")
    return db


def isql(connection, env=None):
    """SELECT 1 through isql; (succeeded, output)."""
    result = subprocess.run(["isql", "-k", connection, "-b", "-v"], input="SELECT 1\n", capture_output=True,
                            text=True, timeout=60, env=env)
    return result.returncode == 0 and "SQLRowCount" in result.stdout, result.stdout + result.stderr


def test_tls_cert_writes_a_ca_a_certificate_and_a_private_key_and_never_overwrites(cli, certs):
    assert sorted(p.name for p in certs.iterdir()) == ["ca.pem", "server.key", "server.pem"]
    assert stat.S_IMODE((certs / "server.key").stat().st_mode) == 0o600
    assert (certs / "server.pem").read_text().count("BEGIN CERTIFICATE") == 2  # with its CA
    again = cli("sim", "tls-cert", "--out-dir", certs, check=False)
    assert again.returncode == 2
    assert "exists already" in again.stderr


def test_bad_input_is_one_error_before_anything_is_written_or_served(cli, shop, certs, tmp_path):
    other = tmp_path / "other"
    cli("sim", "tls-cert", "--out-dir", other)
    cases = [
        (["--tls-cert", certs / "server.key", "--tls-key", certs / "server.key"], "holds no PEM certificate"),
        (["--tls-cert", certs / "server.pem", "--tls-key", other / "server.key"], "does not belong to the certificate"),
        (["--tls-cert", certs / "server.pem", "--tls-key", certs / "ca.pem"], "holds no unencrypted PEM private key"),
        (["--tls-cert", certs / "missing.pem", "--tls-key", certs / "server.key"], "No such file"),
        (["--tls-cert", certs / "server.pem"], "--tls-cert requires --tls-key"),
        (["--force-encryption"], "--force-encryption requires --tls-cert"),
    ]
    for args, message in cases:
        result = cli("sim", "serve", "--db", shop, "--port", 0, *args, check=False)
        assert result.returncode != 0, args
        assert message in result.stderr, result.stderr
        assert result.stdout == "", args  # never listened
    bad_host = cli("sim", "tls-cert", "--host", "two words", "--out-dir", tmp_path / "never", check=False)
    assert bad_host.returncode == 2 and "DNS name or an IP address" in bad_host.stderr
    assert not (tmp_path / "never").exists()


def test_freetds_and_driver_18_connect_encrypted_and_a_forced_server_refuses_plaintext(shop, certs):
    server = Server(shop, "--tls-cert", certs / "server.pem", "--tls-key", certs / "server.key", "--force-encryption")
    try:
        freetds = f"Driver=FreeTDS;Server=127.0.0.1;Port={server.port};TDS_Version=7.4;UID=reader;PWD={PASSWORD}"
        ok, out = isql(freetds + ";Encryption=require")
        assert ok, out
        ok, out = isql(freetds + ";Encryption=off")
        assert not ok, out
        trusted = dict(os.environ, SSL_CERT_FILE=str(certs / "ca.pem"))
        seed = f"Driver={{{DRIVER_18}}};Server=localhost,{server.port};Database=sim;Encrypt=yes;UID=reader;PWD={PASSWORD}"
        ok, out = isql(seed, env=trusted)
        assert ok, out
        ok, out = isql(seed)  # the CA not trusted
        assert not ok and "certificate verify failed" in out, out
        ok, out = isql(freetds + ";Encryption=require")  # still serving
        assert ok, out
    finally:
        _, _, log = server.stop()
    assert "the client does not support encryption, which this server requires" in log
    assert "does not trust this server's certificate" in log
    assert PASSWORD not in log


def test_a_pipeline_reads_through_the_seed_connection_string_over_tls(cli, shop, certs, tmp_path):
    server = Server(shop, "--tls-cert", certs / "server.pem", "--tls-key", certs / "server.key")
    try:
        source = (f'connectionString = "Driver={{{DRIVER_18}}};Server=localhost,{server.port};Database=sim;'
                  f'Encrypt=yes"\nuser = "reader"\npassword_env = "TLS_TEST_PASSWORD"\nmaxCommitsPerBatch = 10')
        (tmp_path / "pipeline.toml").write_text(pipeline_text("availableNow", source, backend="odbc"))
        env = dict(os.environ, TLS_TEST_PASSWORD=PASSWORD)
        untrusted = subprocess.run([BINARY, "run", "--json", str(tmp_path / "pipeline.toml")], capture_output=True,
                                   text=True, timeout=300, env=env)
        assert untrusted.returncode == 2, untrusted.stderr
        assert "the server's TLS certificate is not trusted" in untrusted.stderr
        assert "SSL_CERT_FILE" in untrusted.stderr and PASSWORD not in untrusted.stderr
        assert not (tmp_path / "lake").exists()  # refused before anything was written

        env["SSL_CERT_FILE"] = str(certs / "ca.pem")
        run = subprocess.run([BINARY, "run", "--json", str(tmp_path / "pipeline.toml")], capture_output=True,
                             text=True, timeout=300, env=env)
        assert run.returncode == 0, run.stderr
        assert PASSWORD not in run.stdout + run.stderr
    finally:
        server.stop()
    for ci in TABLES:
        assert sorted(bronze_keys(tmp_path / "lake" / "bronze" / ci)) == sorted(change_table_keys(shop, ci)), ci
