"""Schema changes from the command line: `sim add-column` / `alter-column` / `enable-cdc` as
the DBA's statements, a native `run` that switches to a newer capture instance in place (bronze,
read back by delta-rs, gains the new column), and `mssql-cdc switches` and `status` telling when
the older instance may be disabled."""

import json

from deltalake import DeltaTable

from test_run import make_db, write_pipeline

OLD, NEW = "dbo_orders", "dbo_orders_v2"


def switches(cli, pipeline):
    result = cli("switches", "--json", pipeline, check=False)
    doc = json.loads(result.stdout)
    (table,) = doc["tables"]
    return result.returncode, table


def test_a_native_run_switches_in_place_and_switches_says_when_the_old_instance_may_go(cli, tmp_path):
    db = make_db(cli, tmp_path, transactions=40)
    pipeline = write_pipeline(tmp_path, tables=f'tables = ["{OLD}"]')
    cli("run", pipeline)
    code, table = switches(cli, pipeline)
    assert (code, table["state"], table["table"]) == (0, "single", "dbo.orders")

    cli("sim", "add-column", "--db", db, "--table", "dbo.orders", "--column", "note varchar(20)")
    cli("sim", "enable-cdc", "--db", db, "--table", "dbo.orders", "--capture-instance", NEW)
    code, table = switches(cli, pipeline)
    assert (code, table["state"]) == (1, "pending")
    assert table["instances"] == [OLD, NEW]

    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 20, "--seed", 8,
        "--statements", 2, "--tables", "dbo.orders")
    code, table = switches(cli, pipeline)
    assert (code, table["state"]) == (1, "not_reached")

    cli("run", pipeline)  # one batch crosses the switch
    code, table = switches(cli, pipeline)
    assert (code, table["state"]) == (1, "waiting")
    assert f"wait for one more batch, then '{OLD}' may be disabled" in table["advice"]

    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 5, "--seed", 9,
        "--statements", 2, "--tables", "dbo.orders")
    cli("run", pipeline)
    code, table = switches(cli, pipeline)
    assert (code, table["state"], table["may_disable_older"]) == (0, "passed", True)
    text = cli("status", pipeline, check=False).stdout
    assert f"switched {OLD} -> {NEW} at LSN 0x" in text and f"{OLD} may be disabled" in text
    status = json.loads(cli("status", "--json", pipeline, check=False).stdout)
    assert status["tables"][0]["capture_instance_switch"]["older_may_be_disabled"] is True

    cli("sim", "disable-cdc", "--db", db, "--capture-instance", OLD)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 5, "--seed", 10,
        "--statements", 2, "--tables", "dbo.orders")
    cli("run", pipeline)
    bronze = DeltaTable(str(tmp_path / "lake" / "bronze" / OLD)).to_pyarrow_table().to_pylist()
    keys = [(r["_start_lsn"], r["_seqval"], r["_operation"]) for r in bronze]
    assert len(keys) == len(set(keys))
    assert any(r["note"] is not None for r in bronze)
    assert {r["_capture_instance"] for r in bronze} == {OLD, NEW}
    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    assert [r["detail"] for r in facts if r["event"] == "capture_instance_switched"] == [f"{OLD} -> {NEW}"]


def test_alter_column_converts_or_refuses_changing_nothing(cli, tmp_path):
    db = make_db(cli, tmp_path, transactions=10)
    done = cli("sim", "alter-column", "--db", db, "--table", "dbo.orders", "--column", "status varchar(40) not null")
    assert "altered column status of dbo.orders to varchar(40)" in done.stdout
    refused = cli("sim", "alter-column", "--db", db, "--table", "dbo.orders", "--column", "status varchar(2) not null",
                  check=False)
    assert refused.returncode != 0 and "does not fit" in refused.stderr and "nothing was changed" in refused.stderr
