"""Microsoft's JDBC driver (mssql-jdbc 12.4.2, the version Debezium 3.6.1 pulls) against `sim
serve`, in plaintext and encrypted: the steps of tests/clients/java/JdbcChecks.java (the
server's identity, prepared statements with parameters over the CDC functions, catalog queries
as Debezium's connector asks them, which the T-SQL front end answers, DatabaseMetaData's tables,
columns, primary keys and indexes, transactions and savepoints, SQL Server's errors, isValid), and the
certificates the driver refuses."""

import subprocess

import pytest
from sim_serving import BINARY, serving

STEPS = ["ok server", "ok prepared statements", "ok catalog queries", "ok metadata", "ok transactions", "ok errors",
         "ok isValid"]


# The tests run beside the Spark suites: a JVM starting, handshaking and logging in on a busy
# machine may take longer than the server's default 10 s login timeout.
SLOW_LOGIN = ("--login-timeout", 120)


def url(database, port, host="127.0.0.1", **options):
    settings = {"databaseName": "sim", "user": database.login, "password": database.password, **options}
    return f"jdbc:sqlserver://{host}:{port};" + ";".join(f"{k}={v}" for k, v in settings.items())


def checks(java_checks, database, jdbc_url):
    done = java_checks("JdbcChecks", jdbc_url, database.capture_instance, database.min_lsn, database.change_rows)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split("\n")[:len(STEPS)] == STEPS


def test_plaintext(java_checks, client_database):
    with serving(client_database.path, *SLOW_LOGIN) as port:
        checks(java_checks, client_database, url(client_database, port, encrypt="false"))


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """`sim tls-cert`'s CA and server certificate for localhost, and the CA in a PKCS12 trust
    store for the driver."""
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run([BINARY, "sim", "tls-cert", "--host", "localhost", "--out-dir", folder / "certs"], check=True,
                   capture_output=True)
    certs = folder / "certs"
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "sim-ca", "-file", certs / "ca.pem",
                    "-keystore", folder / "trust.p12", "-storetype", "PKCS12", "-storepass", "trust-pw"],
                   check=True, capture_output=True)
    return certs, folder / "trust.p12"


def test_encrypted_with_a_trusted_ca_and_with_trust_server_certificate(java_checks, client_database, certificates):
    certs, trust_store = certificates
    with serving(client_database.path, "--tls-cert", certs / "server.pem", "--tls-key", certs / "server.key",
                 *SLOW_LOGIN) as port:
        trusted = url(client_database, port, host="localhost", encrypt="true", trustStore=trust_store,
                      trustStorePassword="trust-pw", trustStoreType="PKCS12")
        checks(java_checks, client_database, trusted)
        checks(java_checks, client_database, url(client_database, port, encrypt="true", trustServerCertificate="true"))


def test_the_driver_refuses_a_certificate_it_does_not_trust_or_for_another_host(java_checks, client_database,
                                                                                 certificates):
    certs, trust_store = certificates
    with serving(client_database.path, "--tls-cert", certs / "server.pem", "--tls-key", certs / "server.key",
                 *SLOW_LOGIN) as port:
        untrusted = java_checks("JdbcChecks", url(client_database, port, host="localhost", encrypt="true"),
                                "x", "0x00", 0)
        assert untrusted.returncode != 0
        assert "PKIX path building failed" in untrusted.stderr, untrusted.stderr
        other_host = java_checks("JdbcChecks", url(client_database, port, encrypt="true", trustStore=trust_store,
                                                   trustStorePassword="trust-pw", trustStoreType="PKCS12",
                                                   hostNameInCertificate="db.example.com"),
                                 "x", "0x00", 0)
        assert other_host.returncode != 0
        assert "db.example.com" in other_host.stderr, other_host.stderr
