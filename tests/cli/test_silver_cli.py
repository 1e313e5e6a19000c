"""Silver tables of a pipeline: `mssql-cdc run` keeps them after every bronze commit and
`mssql-cdc apply-changes` brings them up to date once; each silver table must hold exactly the
source table's rows, read back with delta-rs."""

import sqlite3
import subprocess

from deltalake import DeltaTable

from helpers import BINARY, TABLES, pipeline_text

# Per table: its key and a few columns whose text forms compare directly with the simulator's.
COLUMNS = {
    "dbo_customers": ("dbo.customers", ["customer_id"], ["name", "country"]),
    "dbo_orders": ("dbo.orders", ["order_id"], ["customer_id", "status"]),
    "dbo_order_items": ("dbo.order_items", ["order_id", "line_no"], ["product_code", "quantity"]),
}

SILVER = '\n[silver]\ntarget = "lake/silver/{ci}"\n'


def make_db(cli, tmp_path, transactions, seed):
    db = tmp_path / "shop.sim"
    if not db.exists():
        cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
        cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", transactions, "--seed", seed,
        "--statements", 3)
    return db


def write_pipeline(tmp_path, extra=SILVER, stream_extra="bootstrap = true"):
    text = pipeline_text("availableNow", 'sim_path = "shop.sim"\nsourceTimeZone = "UTC"',
                         stream_extra=stream_extra) + extra
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    return path


def source_rows(db, ci):
    table, keys, columns = COLUMNS[ci]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(f'SELECT {", ".join(keys + columns)} FROM "{table}"').fetchall()
    return {tuple(str(v) for v in row) for row in rows}


def silver_rows(tmp_path, ci):
    _, keys, columns = COLUMNS[ci]
    table = DeltaTable(str(tmp_path / "lake" / "silver" / ci)).to_pyarrow_table(columns=keys + columns)
    rows = [tuple(str(r[c]) for c in keys + columns) for r in table.to_pylist()]
    assert len(rows) == len(set(rows)), "one row per key"
    return set(rows)


def test_run_keeps_every_silver_table_equal_to_its_source_table(cli, tmp_path):
    db = make_db(cli, tmp_path, 150, 3)
    pipeline = write_pipeline(tmp_path)
    cli("run", pipeline)
    for ci in TABLES:
        assert silver_rows(tmp_path, ci) == source_rows(db, ci), ci

    make_db(cli, tmp_path, 150, 4)  # updates and deletes of the rows silver holds
    cli("run", pipeline)
    for ci in TABLES:
        assert silver_rows(tmp_path, ci) == source_rows(db, ci), ci

    # Silver's position and verdict are in the control table, under the silver table's path.
    control = DeltaTable(str(tmp_path / "lake" / "ops" / "control")).to_pyarrow_table().to_pylist()
    by_name = {row["table_name"]: row for row in control}
    for ci in TABLES:
        silver = by_name[str(tmp_path / "lake" / "silver" / ci)]
        bronze = by_name[str(tmp_path / "lake" / "bronze" / ci)]
        assert silver["applied_lsn"] is not None and silver["snapshot_lsn"] is not None
        assert silver["finalized_until"] == bronze["finalized_until"]

    # apply-changes with nothing new changes nothing.
    versions = {ci: DeltaTable(str(tmp_path / "lake" / "silver" / ci)).version() for ci in TABLES}
    out = cli("apply-changes", pipeline).stdout
    assert out.count(" 0 upserted, 0 deleted") == len(TABLES), out
    assert versions == {ci: DeltaTable(str(tmp_path / "lake" / "silver" / ci)).version() for ci in TABLES}


def test_a_chunked_bootstrap_reaches_silver_within_one_available_now_run(cli, tmp_path):
    """No change follows the snapshot: the stream's only commits are its waves, which silver
    gets as they are written, and silver is the source table when the run ends."""
    db = make_db(cli, tmp_path, 150, 6)
    pipeline = write_pipeline(tmp_path, extra=SILVER + "\n[backfill]\nchunk_rows = 20\n",
                              stream_extra='bootstrap = true\nsnapshot = "chunked"')
    out = cli("run", pipeline).stderr
    for ci in TABLES:
        assert silver_rows(tmp_path, ci) == source_rows(db, ci), ci
    assert "rebuilt from a snapshot" in out


def test_apply_changes_brings_silver_up_to_date_without_run(cli, tmp_path):
    db = make_db(cli, tmp_path, 100, 5)
    pipeline = write_pipeline(tmp_path, extra="", stream_extra="bootstrap = true")
    cli("run", pipeline)  # bronze only: no [silver] yet
    pipeline = write_pipeline(tmp_path)
    out = cli("apply-changes", pipeline, "--table", "dbo_orders").stdout
    assert "rebuilt" in out
    assert silver_rows(tmp_path, "dbo_orders") == source_rows(db, "dbo_orders")
    assert not (tmp_path / "lake" / "silver" / "dbo_customers").exists()


def refused(tmp_path, pipeline, *args):
    result = subprocess.run([BINARY, *args, str(pipeline)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    return result.stderr


def test_bad_silver_input_is_refused_before_anything_is_written(cli, tmp_path):
    make_db(cli, tmp_path, 20, 6)
    cases = [
        (SILVER.replace("{ci}", "one"), "must contain '{ci}'"),
        (SILVER + "[silver.keys]\ndbo_nope = [\"id\"]\n", "'dbo_nope' is not one of the pipeline's tables"),
        (SILVER + "[silver.keys]\ndbo_orders = [\"nope\"]\n", "silver key 'nope' of capture instance 'dbo_orders'"),
        ('\n[silver]\ntarget = "lake/silver/{ci}"\nkey = ["x"]\n', "unknown key 'key' in [silver]"),
    ]
    for extra, says in cases:
        pipeline = write_pipeline(tmp_path, extra=extra)
        assert says in refused(tmp_path, pipeline, "run"), extra
        assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(write_pipeline(tmp_path).read_text().replace('control_table = "lake/ops/control"\n', ""))
    assert "set [stream] control_table" in refused(tmp_path, pipeline, "run")
    assert "no [silver] section" in refused(tmp_path, write_pipeline(tmp_path, extra=""), "apply-changes")
    assert not (tmp_path / "lake").exists()
