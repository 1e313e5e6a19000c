"""`mssql-cdc run --metrics-port`: an always-on run serves each table's health on
http://127.0.0.1:PORT/metrics in Prometheus text format while it runs; the figures agree with
what the run wrote. A port already taken refuses the run before anything is written."""

import re
import socket
import subprocess
import time
import urllib.error
import urllib.request

from deltalake import DeltaTable

from helpers import BINARY, TABLES, pipeline_text
from test_silver_cli import make_db


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return response.read().decode()


def samples(text):
    """{(metric, table): value} of every sample line."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = re.fullmatch(r'(\w+)\{table="([^"]+)"\} (\S+)', line)
        assert match, line
        out[(match.group(1), match.group(2))] = float(match.group(3))
    return out


def test_the_metrics_endpoint_is_scraped_during_a_run(cli, tmp_path):
    db = make_db(cli, tmp_path, 120, 3)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=200 ms", 'sim_path = "shop.sim"\nsourceTimeZone = "UTC"'))
    port = free_port()
    run = subprocess.Popen([BINARY, "run", "--json", str(pipeline), "--metrics-port", str(port)], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        got = {}
        while time.monotonic() < deadline:
            try:
                got = samples(scrape(port))
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
                continue
            if all(got.get(("mssql_cdc_batches_total", ci), 0) >= 1 for ci in TABLES):
                break
            time.sleep(0.2)
        for ci in TABLES:
            assert got[("mssql_cdc_table_running", ci)] == 1 and got[("mssql_cdc_table_failed", ci)] == 0
            assert got[("mssql_cdc_batches_total", ci)] >= 1, got
            assert got[("mssql_cdc_last_batch_seconds", ci)] >= 0
            assert ("mssql_cdc_retention_headroom_hours", ci) in got
            assert got[("mssql_cdc_retention_cleanup_purged", ci)] == 0  # no cleanup ever ran here
            assert got[("mssql_cdc_verdict_age_seconds", ci)] >= 0
        text = scrape(port)
        assert "# TYPE mssql_cdc_rows_total counter" in text
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5):
            pass
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
            raise AssertionError("only /metrics is served")
        except urllib.error.HTTPError as e:
            assert e.code == 404

        # More changes: the counters follow what the run writes.
        make_db(cli, tmp_path, 60, 4)
        time.sleep(2)
        final = samples(scrape(port))
    finally:
        run.send_signal(2)
        out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    total = lambda s: sum(s[("mssql_cdc_rows_total", ci)] for ci in TABLES)  # noqa: E731
    assert total(final) > total(got)
    for ci in TABLES:
        bronze_rows = DeltaTable(str(tmp_path / "lake" / "bronze" / ci)).to_pyarrow_dataset().count_rows()
        assert 0 < final[("mssql_cdc_rows_total", ci)] <= bronze_rows
    # After the run nothing listens any more.
    try:
        scrape(port)
        raise AssertionError("the endpoint ends with the run")
    except (urllib.error.URLError, ConnectionError):
        pass


def test_a_taken_port_refuses_the_run_before_anything_is_written(cli, tmp_path):
    make_db(cli, tmp_path, 10, 5)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("availableNow", 'sim_path = "shop.sim"\nsourceTimeZone = "UTC"'))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([BINARY, "run", str(pipeline), "--metrics-port", str(port)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"--metrics-port {port}: cannot listen" in done.stderr, done.stderr
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()
    done = subprocess.run([BINARY, "run", str(pipeline), "--metrics-port", "0"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and not (tmp_path / "lake").exists()
