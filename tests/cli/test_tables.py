"""`mssql-cdc tables`: the capture instances on a pipeline's source and the tables line of a
pipeline over every table: one instance per table (the first enabled), the heartbeat's
(sql/heartbeat.sql) left out. Through the sim backend and through ODBC from `sim serve`; a
pipeline built from the printed line runs every table but the heartbeat."""

import json
import os

from deltalake import DeltaTable
from helpers import SimServer, pipeline_text

HEARTBEAT = ["--table", "dbo.cdc_heartbeat", "--column", "id tinyint not null",
             "--column", "beat_at datetime2(3) not null", "--key", "id"]
EXPECTED = ["dbo_customers", "dbo_order_items", "dbo_orders"]


def database(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "create-table", "--db", db, *HEARTBEAT)  # CDC enabled as dbo_cdc_heartbeat
    cli("sim", "enable-cdc", "--db", db, "--table", "dbo.customers", "--capture-instance", "dbo_customers_v2")
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 20, "--seed", 2)
    return db


def check_listing(cli, pipeline):
    doc = json.loads(cli("tables", pipeline, "--json").stdout)
    assert doc["tables"] == EXPECTED
    judged = {i["capture_instance"]: i for i in doc["instances"]}
    assert set(judged) == {*EXPECTED, "dbo_cdc_heartbeat", "dbo_customers_v2"}
    assert not judged["dbo_cdc_heartbeat"]["stream"] and "heartbeat" in judged["dbo_cdc_heartbeat"]["why_not"]
    assert not judged["dbo_customers_v2"]["stream"] and "dbo_customers" in judged["dbo_customers_v2"]["why_not"]
    assert judged["dbo_customers_v2"]["table"] == "dbo.customers"
    text = cli("tables", pipeline).stdout
    assert text.splitlines()[-1] == "tables = " + json.dumps(EXPECTED, separators=(",", ":"))
    return text.splitlines()[-1]


def test_the_tables_of_a_pipeline_over_every_table(cli, tmp_path):
    db = database(cli, tmp_path)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text('[source]\nbackend = "sim"\nsim_path = "shop.sim"\n')  # no tables yet
    tables_line = check_listing(cli, pipeline)
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()

    pipeline.write_text(pipeline_text("availableNow", 'sim_path = "shop.sim"', tables=tables_line,
                                      stream_extra="bootstrap = true"))
    cli("run", pipeline)
    assert sorted(p.name for p in (tmp_path / "lake" / "bronze").iterdir()) == EXPECTED
    for ci in EXPECTED:
        assert DeltaTable(str(tmp_path / "lake" / "bronze" / ci)).to_pyarrow_table().num_rows > 0
    assert db.exists()


def test_through_odbc_from_sim_serve(cli, tmp_path):
    db = database(cli, tmp_path)
    cli("sim", "login", "add", "--db", db, "--name", "lister", "--password", "Lister-pw-1", "--db-owner")
    name = json.loads(cli("sim", "info", "--db", db, "--json").stdout)["database"]
    server = SimServer(db)
    try:
        pipeline = tmp_path / "pipeline.toml"
        pipeline.write_text('[source]\nbackend = "odbc"\n'
                            f'connection_string = "Server=127.0.0.1,{server.port};Database={name};Encrypt=no"\n'
                            'user = "lister"\npassword_env = "LISTER_PASSWORD"\n')
        os.environ["LISTER_PASSWORD"] = "Lister-pw-1"
        check_listing(cli, pipeline)
    finally:
        os.environ.pop("LISTER_PASSWORD", None)
        server.stop()


def test_bad_input(cli, tmp_path):
    missing = cli("tables", tmp_path / "nope.toml", check=False)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text('[source]\nbackend = "sim"\nsim_path = "absent.sim"\n')
    absent = cli("tables", pipeline, check=False)
    assert absent.returncode != 0 and "absent.sim" in absent.stderr
    assert not (tmp_path / "absent.sim").exists()
