"""`mssql-cdc sim ...` from the shell: a database built and driven only through the CLI."""

import json
import time

from helpers import SimServer


def info(cli, db):
    return json.loads(cli("sim", "info", "--db", db, "--json").stdout)


def instance(doc, name):
    return next(ci for ci in doc["capture_instances"] if ci["name"] == name)


def test_tables_transactions_and_cleanup(cli, tmp_path):
    db = tmp_path / "s.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "create-table", "--db", db, "--table", "dbo.t", "--column", "id int not null",
        "--column", "name nvarchar(20)", "--key", "id")
    statements = [
        {"op": "insert", "table": "dbo.t", "row": {"id": 1, "name": "a"}},
        {"op": "insert", "table": "dbo.t", "row": {"id": 2, "name": "b"}},
        {"op": "update", "table": "dbo.t", "key": {"id": 1}, "set": {"name": "c"}},
        {"op": "delete", "table": "dbo.t", "key": {"id": 2}},
    ]
    cli("sim", "dml", "--db", db, "--json", json.dumps(statements))
    doc = instance(info(cli, db), "dbo_t")
    assert doc["change_rows"] == 5
    assert doc["operations"] == {"insert": 2, "update_before": 1, "update_after": 1, "delete": 1}

    cli("sim", "clock", "--db", db, "--advance", 7200)
    cli("sim", "idle", "--db", db)
    before = instance(info(cli, db), "dbo_t")["start_lsn"]
    cli("sim", "cleanup", "--db", db, "--retention-minutes", 60)
    after = instance(info(cli, db), "dbo_t")
    assert after["start_lsn"] > before
    assert after["change_rows"] == 0


def test_workload_is_deterministic_for_a_seed(cli, tmp_path):
    docs = []
    for name in ("a.sim", "b.sim"):
        db = tmp_path / name
        cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
        cli("sim", "demo-schema", "--db", db)
        cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 200, "--seed", 11,
            "--statements", 2)
        docs.append(info(cli, db))
    assert docs[0]["capture_instances"] == docs[1]["capture_instances"]
    assert sum(ci["change_rows"] for ci in docs[0]["capture_instances"]) > 200


def test_bad_input_is_one_clear_line_and_changes_nothing(cli, tmp_path):
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("hello")
    result = cli("sim", "info", "--db", not_a_db, check=False)
    assert result.returncode != 0
    assert "not a mssql-cdc simulated database" in result.stderr
    assert not_a_db.read_text() == "hello"

    db = tmp_path / "s.sim"
    cli("sim", "create", "--db", db)
    result = cli("sim", "create-table", "--db", db, "--table", "dbo.t", "--column",
                 "id int not null", "--column", "x decimal(40,2)", "--key", "id", check=False)
    assert result.returncode != 0
    assert "decimal(40,2)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert info(cli, db)["capture_instances"] == []


def test_a_quiet_database_gets_the_capture_processs_idle_entries(cli, tmp_path):
    db = tmp_path / "manual.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00",
        "--idle-entry-seconds", 60)
    cli("sim", "create-table", "--db", db, "--table", "dbo.t", "--column", "id int not null", "--key", "id")
    assert info(cli, db)["lsn_time_mapping"]["idle_entry_seconds"] == 60
    cli("sim", "clock", "--db", db, "--advance", 200)
    assert "wrote 3 idle entries" in cli("sim", "idle", "--db", db, "--due").stdout
    assert info(cli, db)["lsn_time_mapping"]["idle_entries"] == 3
    refused = cli("sim", "idle", "--db", db, "--due", "--count", 2, check=False)
    assert refused.returncode != 0 and "--count" in refused.stderr
    refused = cli("sim", "create", "--db", tmp_path / "zero.sim", "--idle-entry-seconds", 0, check=False)
    assert refused.returncode == 2 and "idle-entry interval" in refused.stderr
    assert not (tmp_path / "zero.sim").exists()

    # `sim serve` runs the capture job: on a quiet database the max LSN moves while it serves.
    db = tmp_path / "served.sim"
    cli("sim", "create", "--db", db, "--idle-entry-seconds", 0.5)
    cli("sim", "create-table", "--db", db, "--table", "dbo.t", "--column", "id int not null", "--key", "id")
    assert "idle (one per 0.5 s" in cli("sim", "info", "--db", db).stdout
    before = info(cli, db)
    server = SimServer(db)
    try:
        deadline = time.monotonic() + 30
        while info(cli, db)["lsn_time_mapping"]["idle_entries"] < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        assert server.stop()[0] == 0
    after = info(cli, db)
    assert after["lsn_time_mapping"]["idle_entries"] >= 2 and after["max_lsn"] > before["max_lsn"]
    time.sleep(1.5)
    assert info(cli, db)["lsn_time_mapping"]["idle_entries"] == after["lsn_time_mapping"]["idle_entries"]
