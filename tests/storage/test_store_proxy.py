"""Stores behind an HTTP proxy (http_proxy_server.py), as in a company network: the engine's own
requests and Arrow's take the proxy the environment names (curl's variables), plain HTTP
forwarded and https through a tunnel; NO_PROXY goes around it; proxy settings that are refused,
and a proxy that refuses the credentials, stop the run before anything is written, without the
password in any message."""

import pytest

from azure_emulator import AzureEmulator, tls_certificate
from http_proxy_server import HttpProxyServer
from s3_emulator import S3Emulator
from store_helpers import assert_bronze_equals_change_tables, make_db, place_name, refused, run, write_pipeline

TABLES = 'tables = ["dbo_orders"]'
PASSWORD = "pr0xy-pa55"


@pytest.fixture(scope="module")
def s3():
    emulator = S3Emulator()
    yield emulator
    emulator.stop()


@pytest.fixture(scope="module")
def proxy():
    server = HttpProxyServer(user="cdc", password=PASSWORD)
    yield server
    server.stop()


def test_s3_over_plain_http_through_an_authenticating_proxy(s3, proxy, request, tmp_path):
    bucket = place_name(request)
    s3.create(bucket)
    db = make_db(s3, tmp_path, transactions=20)
    pipeline = write_pipeline(tmp_path, f"s3://{bucket}", tables=TABLES)
    before = len(proxy.seen)
    run(s3, "run", pipeline, env=s3.env(http_proxy=proxy.url("cdc", PASSWORD)))
    agents = {agent.split("/")[0] for _, _, agent in proxy.seen[before:]}
    assert "mssql-cdc" in agents and "aws-sdk-cpp" in agents, proxy.seen[before:]
    assert_bronze_equals_change_tables(s3, f"s3://{bucket}", db, tables=["dbo_orders"])


def test_no_proxy_goes_around_it_and_bad_proxy_settings_are_refused(s3, proxy, request, tmp_path):
    bucket = place_name(request)
    s3.create(bucket)
    db = make_db(s3, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path, f"s3://{bucket}", tables=TABLES)
    for variables, says in [
            (dict(http_proxy=proxy.url("cdc", "wrong-" + PASSWORD)), "407 Proxy Authentication Required"),
            (dict(http_proxy=f"socks5://cdc:{PASSWORD}@127.0.0.1:{proxy.port}"), "names a socks5:// proxy"),
            (dict(http_proxy=f"http://cdc:{PASSWORD}@127.0.0.1"), "without a port")]:
        line = refused(s3, tmp_path, pipeline, env=s3.env(**variables), secrets=(PASSWORD,))
        assert says in line and "http_proxy" in line, line
    assert s3.keys(bucket) == []
    # A proxy that is not there, for every host but the emulator's.
    run(s3, "run", pipeline, env=s3.env(http_proxy="http://127.0.0.1:9", NO_PROXY="localhost,127.0.0.1"))
    assert_bronze_equals_change_tables(s3, f"s3://{bucket}", db, tables=["dbo_orders"])


def test_azure_over_https_through_the_proxys_tunnel(proxy, request, tmp_path_factory, tmp_path):
    authority, cert, key = tls_certificate(tmp_path_factory.mktemp("tls"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SSL_CERT_FILE", str(authority))
        azure = AzureEmulator(tls=(authority, cert, key))
        try:
            container = place_name(request)
            azure.create(container)
            db = make_db(azure, tmp_path, transactions=20)
            pipeline = write_pipeline(tmp_path, f"az://{container}", tables=TABLES)
            before = len(proxy.seen)
            run(azure, "run", pipeline, env=azure.env(https_proxy=proxy.url("cdc", PASSWORD)))
            tunnels = [(target, agent) for method, target, agent in proxy.seen[before:] if method == "CONNECT"]
            assert {target for target, _ in tunnels} == {f"127.0.0.1:{azure.port}"}, proxy.seen[before:]
            # The engine's commit requests, and the data files of Arrow's Azure library (curl).
            assert {agent == "mssql-cdc" for _, agent in tunnels} == {True, False}, tunnels
            assert_bronze_equals_change_tables(azure, f"az://{container}", db, tables=["dbo_orders"])
        finally:
            azure.stop()
