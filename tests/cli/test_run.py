"""`mssql-cdc run` and `mssql-cdc status` over pipeline files on simulated databases.

Every table a run writes is read back with delta-rs (the `deltalake` package).
"""

import json
import os
import signal
import subprocess
import time

import pytest
from deltalake import DeltaTable

from helpers import BINARY, ROOT, TABLES, pipeline_text


def make_db(cli, tmp_path, transactions=200, seed=5):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", transactions,
        "--seed", seed, "--statements", 2)
    return db


def write_pipeline(tmp_path, trigger="availableNow", source_extra="", tables=None, stream_extra=""):
    """A pipeline file with paths relative to its own directory."""
    text = pipeline_text(trigger, f'sim_path = "shop.sim"\nsourceTimeZone = "UTC"\n{source_extra}',
                         tables=tables, stream_extra=stream_extra)
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    return path


def change_rows(cli, db):
    doc = json.loads(cli("sim", "info", "--db", db, "--json").stdout)
    return {ci["name"]: ci["change_rows"] for ci in doc["capture_instances"]}


def json_lines(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def bronze(tmp_path, ci):
    return DeltaTable(str(tmp_path / "lake" / "bronze" / ci)).to_pyarrow_table()


def test_available_now_run_copies_every_table_and_reports_json_lines(cli, tmp_path):
    db = make_db(cli, tmp_path)
    pipeline = write_pipeline(tmp_path)
    result = cli("run", pipeline)
    lines = json_lines(result.stdout)
    assert lines[0]["event"] == "started" and lines[0]["tables"] == TABLES
    summary = lines[-1]
    assert summary["event"] == "summary" and summary["exit_status"] == 0
    assert summary["failed"] == []

    expected = change_rows(cli, db)
    for ci in TABLES:
        table = bronze(tmp_path, ci)
        assert table.num_rows == expected[ci] > 0
        assert summary["tables"][ci]["status"] == "finished"
        assert summary["tables"][ci]["rows"] == expected[ci]
        assert summary["tables"][ci]["finalized_until"] is not None
        batches = [l for l in lines if l["event"] == "batch" and l["table"] == ci]
        assert sum(b["rows"] for b in batches) == expected[ci]

    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    targets = {row["target"] for row in facts}
    assert targets == {str(tmp_path / "lake" / "bronze" / ci) for ci in TABLES}

    control = DeltaTable(str(tmp_path / "lake" / "ops" / "control")).to_pyarrow_table().to_pylist()
    assert {row["table_name"] for row in control} == targets
    assert all(row["finalized_until"] is not None for row in control)

    # A second run picks up only what is new.
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 50, "--seed", 6)
    second = json_lines(cli("run", pipeline).stdout)[-1]
    expected = change_rows(cli, db)
    for ci in TABLES:
        assert bronze(tmp_path, ci).num_rows == expected[ci]
        assert second["tables"][ci]["rows"] > 0


def test_per_table_sections_override_shared_options(cli, tmp_path):
    make_db(cli, tmp_path)
    pipeline = write_pipeline(
        tmp_path,
        source_extra="maxCommitsPerBatch = 1000",
        tables='[tables.dbo_orders]\nMAX_COMMITS_PER_BATCH = 20\n\n[tables.dbo_customers]\n',
    )
    lines = json_lines(cli("run", pipeline).stdout)
    # Sections start in the file's order.
    assert lines[0]["tables"] == ["dbo_orders", "dbo_customers"]
    summary = lines[-1]
    assert summary["tables"]["dbo_orders"]["batches"] > 5
    assert summary["tables"]["dbo_customers"]["batches"] == 1


def read_events(proc, until, deadline_seconds=30):
    """JSON lines of a running `run --json` until `until(event)` holds; returns them."""
    events = []
    deadline = time.time() + deadline_seconds
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        events.append(json.loads(line))
        if until(events[-1]):
            return events
    raise AssertionError(f"gave up waiting; events so far: {events}")


def test_a_table_failing_mid_run_exits_1_and_is_named_while_the_others_go_on(cli, tmp_path):
    db = make_db(cli, tmp_path, transactions=50)
    pipeline = write_pipeline(tmp_path, trigger="processingTime=100 ms")
    proc = subprocess.Popen([BINARY, "run", "--json", str(pipeline)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        seen = set()
        read_events(proc, lambda e: e["event"] == "batch" and (seen.add(e["table"]) or seen == set(TABLES)))
        cli("sim", "disable-cdc", "--db", db, "--capture-instance", "dbo_orders")
        cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 30, "--seed", 8,
            "--tables", "dbo.customers", "--tables", "dbo.order_items")
        failed = read_events(proc, lambda e: e["event"] == "failed")[-1]
        assert failed["table"] == "dbo_orders" and failed["error_class"] == "NotFoundError"
        # The others keep going: both catch up with the new changes.
        expected = change_rows(cli, db)
        deadline = time.time() + 30
        while time.time() < deadline and any(
                bronze(tmp_path, ci).num_rows != expected[ci] for ci in ("dbo_customers", "dbo_order_items")):
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr
    summary = json_lines(rest)[-1]
    assert summary["failed"] == ["dbo_orders"]
    assert summary["tables"]["dbo_customers"]["status"] == "stopped"
    assert summary["tables"]["dbo_order_items"]["status"] == "stopped"
    for ci in ("dbo_customers", "dbo_order_items"):
        assert bronze(tmp_path, ci).num_rows == expected[ci]
    assert "table dbo_orders failed: NotFoundError" in stderr
    assert "dbo_customers failed" not in stderr


def test_data_loss_at_the_first_batch_fails_that_table_alone(cli, tmp_path):
    db = make_db(cli, tmp_path)
    cli("sim", "clock", "--db", db, "--advance", 7200)
    cli("sim", "idle", "--db", db)
    cli("sim", "cleanup", "--db", db, "--retention-minutes", 60)
    # dbo_orders asks to start before what cleanup kept.
    pipeline = write_pipeline(
        tmp_path,
        tables=('[tables.dbo_customers]\n\n[tables.dbo_orders]\nstartingLsn = "0x00000000000000000001"\n\n'
                '[tables.dbo_order_items]\n'),
    )
    result = cli("run", pipeline, check=False)
    # Data loss at a table's first batch fails that table alone, as a query's first batch
    # does in Spark; the tables after it start and finish.
    assert result.returncode == 1
    failed = [line for line in result.stderr.splitlines() if "DataLossError" in line]
    assert failed and all("dbo_orders" in line for line in failed), result.stderr
    assert (tmp_path / "checkpoints" / "dbo_order_items").exists()


def test_a_missing_capture_instance_exits_2_before_any_table_writes(cli, tmp_path):
    make_db(cli, tmp_path, transactions=20)
    pipeline = write_pipeline(tmp_path, tables='tables = ["dbo_customers", "dbo_nope", "dbo_orders"]')
    result = cli("run", pipeline, check=False)
    assert result.returncode == 2
    assert "dbo_nope" in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    assert not (tmp_path / "checkpoints").exists() and not (tmp_path / "lake").exists()


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda t: t.replace('target = "lake/bronze/{ci}"', 'target = "lake/bronze"'), "must contain '{ci}'"),
        (lambda t: t.replace("[stream]", "[stream]\nbogus_param = 1"), "bogus_param"),
        (lambda t: t.replace('trigger = "availableNow"', 'trigger = "sometimes"'), "trigger"),
        (lambda t: t + "\n[extra]\n", "unknown section or key 'extra'"),
        (lambda t: t.replace("[source]", "[source\n"), "not valid TOML"),
        (lambda t: t.replace('tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]', ""), "no tables"),
    ],
)
def test_bad_config_exits_2_with_one_clear_line(cli, tmp_path, change, expected):
    make_db(cli, tmp_path, transactions=5)
    pipeline = write_pipeline(tmp_path)
    pipeline.write_text(change(pipeline.read_text()))
    result = cli("run", pipeline, check=False)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "ConfigError" in lines[0] and expected in lines[0]
    assert result.stdout == ""
    assert not (tmp_path / "lake").exists()


def test_missing_pipeline_file_exits_2(cli, tmp_path):
    result = cli("run", tmp_path / "absent.toml", check=False)
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_password_from_the_environment_never_appears_in_any_output(cli, tmp_path):
    secret = "Sup3r-S3cret-pa55"
    make_db(cli, tmp_path, transactions=20)
    env = dict(os.environ, PIPELINE_TEST_PASSWORD=secret)
    outputs = []

    def run(*args):
        result = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, env=env,
                                timeout=120)
        outputs.append(result.stdout + result.stderr)
        return result

    pipeline = write_pipeline(tmp_path, source_extra='user = "reader"\npassword_env = "PIPELINE_TEST_PASSWORD"')
    assert run("run", pipeline).returncode == 0
    run("status", pipeline)
    run("status", "--json", pipeline)
    # A bad option next to the secret: the error names the option, not the value.
    bad = write_pipeline(tmp_path, source_extra=(
        'password_env = "PIPELINE_TEST_PASSWORD"\nconnectTimeout = -1'))
    assert run("run", bad).returncode == 2
    # The same secret written twice (file and environment) is refused without showing it.
    twice = write_pipeline(tmp_path, source_extra=(
        f'password_env = "PIPELINE_TEST_PASSWORD"\npassword = "{secret}"'))
    assert run("run", twice).returncode == 2
    assert all(secret not in out for out in outputs), outputs
    assert "PIPELINE_TEST_PASSWORD" in outputs[-1] or "password" in outputs[-1]

    unset = write_pipeline(tmp_path, source_extra='password_env = "PIPELINE_TEST_UNSET_VARIABLE"')
    result = cli("run", unset, check=False)
    assert result.returncode == 2
    assert "PIPELINE_TEST_UNSET_VARIABLE is not set" in result.stderr


def test_sigterm_stops_a_processing_time_run_cleanly(cli, tmp_path):
    db = make_db(cli, tmp_path, transactions=100)
    pipeline = write_pipeline(tmp_path, trigger="processingTime=200 ms")
    proc = subprocess.Popen([BINARY, "run", "--json", str(pipeline)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        seen = set()
        deadline = time.time() + 30
        while len(seen) < len(TABLES) and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            event = json.loads(line)
            if event["event"] == "batch":
                seen.add(event["table"])
        assert seen == set(TABLES)
        proc.send_signal(signal.SIGTERM)
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    summary = json_lines(rest)[-1]
    assert summary["event"] == "summary" and summary["failed"] == []
    assert {t["status"] for t in summary["tables"].values()} == {"stopped"}
    expected = change_rows(cli, db)
    for ci in TABLES:
        assert bronze(tmp_path, ci).num_rows == expected[ci]


def test_timeout_stops_a_processing_time_run(cli, tmp_path):
    make_db(cli, tmp_path, transactions=20)
    pipeline = write_pipeline(tmp_path, trigger="processingTime=100 ms")
    started = time.time()
    result = cli("run", "--timeout", 1, pipeline)
    assert time.time() - started < 20
    summary = json_lines(result.stdout)[-1]
    assert {t["status"] for t in summary["tables"].values()} == {"stopped"}


def test_status_shows_last_facts_health_and_verdict(cli, tmp_path):
    make_db(cli, tmp_path)
    pipeline = write_pipeline(tmp_path)
    before = cli("status", "--json", pipeline, check=False)
    assert before.returncode == 1
    for table in json.loads(before.stdout)["tables"]:
        assert [a["check"] for a in table["alerts"]][:1] == ["no_facts"]
        assert table["verdict"] is None

    cli("run", pipeline)
    result = cli("status", "--json", pipeline, check=False)
    doc = json.loads(result.stdout)
    assert result.returncode == (0 if doc["healthy"] else 1)
    assert [t["capture_instance"] for t in doc["tables"]] == TABLES
    for table in doc["tables"]:
        assert table["facts_rows"] >= 1
        assert table["last_facts"]["batch_id"] == 0
        assert table["last_facts"]["end_lsn"].startswith("0x")
        # The manual clock stands in 2026-01-01: the verdict is the hour of the last commit.
        assert table["verdict"]["finalized_until"] == "2026-01-01T00:00:00.000"
        assert "no_facts" not in [a["check"] for a in table["alerts"]]

    text = cli("status", pipeline, check=False).stdout
    for ci in TABLES:
        assert ci in text
    assert "2026-01-01T00:00:00.000" in text


def enabled_a_day_before_the_changes(cli, tmp_path):
    """A database on a manual clock whose CDC was enabled on 2026-01-01 and changed a day later,
    and a pipeline of dbo_customers over it."""
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "clock", "--db", db, "--advance", 86400)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 50, "--seed", 5)
    return db, write_pipeline(tmp_path, tables='tables = ["dbo_customers"]')


def test_status_thresholds_are_options_and_silver_verdicts_are_checked(cli, tmp_path):
    """The manual clock stands in 2026-01-02, so by the default thresholds the verdicts
    (bronze's and silver's) are stale and capture is far behind; options that allow it pass.
    A day passes between the enable and the changes, so the retention headroom is a day."""
    db, pipeline = enabled_a_day_before_the_changes(cli, tmp_path)
    pipeline.write_text(pipeline.read_text() + '\n[silver]\ntarget = "lake/silver/{ci}"\n')
    cli("run", pipeline)
    doc = json.loads(cli("status", "--json", pipeline, check=False).stdout)
    (table,) = doc["tables"]
    checks = {a["check"] for a in table["alerts"]}
    assert {"verdict_stale", "silver_verdict_stale", "capture_lag"} <= checks, checks
    assert table["silver"] == {"target": str(tmp_path / "lake" / "silver" / "dbo_customers"),
                               "finalized_until": "2026-01-02T00:00:00.000", "held_by_open_snapshot": False}

    lenient = ["--verdict-margin-minutes", "1e9", "--max-capture-lag-seconds", "1e12",
               "--max-ingestion-lag-seconds", "1e12", "--min-headroom-hours", "0"]
    result = cli("status", "--json", *lenient, pipeline, check=False)
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["tables"][0]["alerts"] == []
    time.sleep(0.1)
    stale = cli("status", "--json", *lenient, "--stale-minutes", "0.001", pipeline, check=False)
    assert stale.returncode == 1
    assert [a["check"] for a in json.loads(stale.stdout)["tables"][0]["alerts"]] == ["stale"]
    text = cli("status", *lenient, pipeline).stdout
    assert "silver " + str(tmp_path / "lake" / "silver" / "dbo_customers") + ": verdict 2026-01-02T00:00:00.000" in text

    bad = cli("status", "--stale-minutes", "0", pipeline, check=False)
    assert bad.returncode == 2 and "--stale-minutes" in bad.stderr


def test_status_source_tells_an_unpurged_instance_from_one_cleanup_is_reaching(cli, tmp_path):
    """CDC enabled a day before the changes and never cleaned up: the watermark is the enable,
    so the measured headroom (a day) is the instance's age. --source sees that nothing was
    purged and measures against the retention instead; after a cleanup it checks as before."""
    db, pipeline = enabled_a_day_before_the_changes(cli, tmp_path)
    cli("run", pipeline)
    lenient = ["--verdict-margin-minutes", "1e9", "--max-capture-lag-seconds", "1e12",
               "--max-ingestion-lag-seconds", "1e12", "--min-headroom-hours", "30"]

    def status(*args):
        result = cli("status", "--json", *lenient, *args, pipeline, check=False)
        (table,) = json.loads(result.stdout)["tables"]
        return result.returncode, table

    code, table = status()
    assert code == 1 and [a["check"] for a in table["alerts"]] == ["headroom"]
    assert "status --source" in table["alerts"][0]["message"] and table["cleanup"] is None
    code, table = status("--source")
    assert code == 0, table
    assert table["cleanup"]["purged_yet"] is False
    assert table["cleanup"]["capture_instance_enabled"] == "2026-01-01T00:00:00.000"
    code, table = status("--source", "--retention-hours", "20")
    assert code == 1 and "cleanup has not purged dbo_customers yet" in table["alerts"][0]["message"]

    cli("sim", "clock", "--db", db, "--advance", 2 * 86400)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 20, "--seed", 6, "--tables", "dbo.customers")
    cli("run", pipeline)  # everything read before cleanup runs
    cli("sim", "cleanup", "--db", db, "--retention-minutes", 60)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 5, "--seed", 7, "--tables", "dbo.customers")
    cli("run", pipeline)
    code, table = status("--source")
    assert table["cleanup"]["purged_yet"] is True
    assert code == 1 and table["alerts"][0]["message"].startswith("retention headroom ")
    assert "status --source" not in table["alerts"][0]["message"]


def test_the_example_pipeline_runs(cli, tmp_path):
    make_db(cli, tmp_path, transactions=100)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text((ROOT / "examples" / "pipeline.toml").read_text())
    summary = json_lines(cli("run", pipeline).stdout)[-1]
    assert summary["failed"] == [] and list(summary["tables"]) != []
    for ci in TABLES:
        table = DeltaTable(str(tmp_path / "lake" / "bronze" / ci)).to_pyarrow_table()
        # bootstrap = true: the snapshot's rows (operation 0) and then no change yet.
        assert table.num_rows > 0
        assert set(table.column("_operation").to_pylist()) == {0}


def test_first_status_after_a_bootstrap_is_what_the_snapshot_proves(cli, tmp_path):
    """Right after a bootstrap with no change after it, the verdict is the snapshot's commit
    time truncated to the hour, and status passes rather than alerting on missing batches."""
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)  # the real clock: the snapshot's commit time is now
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 1000, "--transactions", 50, "--seed", 5, "--statements", 2)
    pipeline = write_pipeline(tmp_path, stream_extra="bootstrap = true")
    cli("run", pipeline)
    result = cli("status", "--json", pipeline, check=False)
    assert result.returncode == 0, result.stdout
    for table in json.loads(result.stdout)["tables"]:
        assert table["alerts"] == [] and table["verdict"]["finalized_until"] is not None, table


def test_status_names_the_data_files_a_table_lost(cli, tmp_path):
    """A bronze data file deleted by hand: every reader of the table fails on it, so status says
    which files the log names that are gone, and the way out."""
    make_db(cli, tmp_path, transactions=60)
    pipeline = write_pipeline(tmp_path)
    cli("run", pipeline)
    assert cli("status", "--json", pipeline, check=False).stdout.count("missing_files") == 0
    lost = sorted((tmp_path / "lake" / "bronze" / "dbo_orders").glob("*.parquet"))[0]
    lost.unlink()
    result = cli("status", "--json", pipeline, check=False)
    assert result.returncode == 1
    tables = {t["capture_instance"]: t for t in json.loads(result.stdout)["tables"]}
    (alert,) = [a for a in tables["dbo_orders"]["alerts"] if a["check"] == "missing_files"]
    assert lost.name in alert["message"] and "bootstrap = true" in alert["message"]
    assert not any(a["check"] == "missing_files" for t in ("dbo_customers", "dbo_order_items")
                   for a in tables[t]["alerts"])
