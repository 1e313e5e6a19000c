"""`mssql-cdc seed`: a copy of a table already in the lake (a Delta table, or Parquet files)
becomes the snapshot in its stream's bronze table; `run` with bootstrap then reads nothing from
the database and replays the changes after the copy. Bad input: one clear error, nothing
written. Tables are read back with delta-rs."""

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

from helpers import BINARY, pipeline_text
from test_run import make_db

CI = "dbo_customers"


def pipeline(tmp_path, name, bootstrap):
    text = pipeline_text("availableNow", 'sim_path = "shop.sim"\nsourceTimeZone = "UTC"',
                         tables=f'tables = ["{CI}"]',
                         stream_extra=f"bootstrap = {'true' if bootstrap else 'false'}")
    text = text.replace("lake/bronze/{ci}", f"lake/{name}/{{ci}}").replace("checkpoints/{ci}", f"checkpoints/{name}/{{ci}}") \
        .replace('app_id = "{ci}-v1"', f'app_id = "{{ci}}-{name}"')
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def latest_images(rows):
    latest = {}
    for row in rows:
        if row["_operation"] == 3:
            continue
        order = (row["_start_lsn"], row["_command_id"] or 0, row["_seqval"] or "", row["_operation"])
        if row["customer_id"] not in latest or order > latest[row["customer_id"]][0]:
            latest[row["customer_id"]] = (order, row)
    return {k: r for k, (_, r) in latest.items() if r["_operation"] != 1}


def test_a_seed_from_a_delta_copy_or_parquet_files_is_the_snapshot_a_bootstrap_finds(cli, tmp_path):
    db = make_db(cli, tmp_path)
    # The copy in the lake: a bootstrap's bronze of another pipeline, metadata columns and all.
    cli("run", pipeline(tmp_path, "copy", bootstrap=True))
    copy = tmp_path / "lake" / "copy" / CI
    copy_rows = DeltaTable(str(copy)).to_pyarrow_table().to_pylist()
    lsn = copy_rows[0]["_snapshot"]
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 40, "--seed", 7, "--statements", 2,
        "--tables", "dbo.customers")

    seeded = cli("seed", pipeline(tmp_path, "seeded", bootstrap=True), "--table", CI, "--from-delta", copy,
                 "--as-of-lsn", lsn)
    assert f"seeded lake/seeded/{CI} with {len(copy_rows)} rows as of LSN {lsn}" in seeded.stdout.replace(str(tmp_path) + "/", "")
    again = cli("seed", pipeline(tmp_path, "seeded", bootstrap=True), "--table", CI, "--from-delta", copy,
                "--as-of-lsn", lsn)
    assert "already seeded" in again.stdout
    cli("run", pipeline(tmp_path, "seeded", bootstrap=True))
    bronze = DeltaTable(str(tmp_path / "lake" / "seeded" / CI)).to_pyarrow_table().to_pylist()
    assert len([r for r in bronze if r["_operation"] == 0]) == len(copy_rows)  # the bootstrap read nothing
    # The same as a bootstrap of the database now: the seed plus the changes after it.
    cli("run", pipeline(tmp_path, "fresh", bootstrap=True))
    fresh = DeltaTable(str(tmp_path / "lake" / "fresh" / CI)).to_pyarrow_table().to_pylist()
    want = {k: (r["name"], r["email"]) for k, r in latest_images(fresh).items()}
    assert {k: (r["name"], r["email"]) for k, r in latest_images(bronze).items()} == want
    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    assert [(r["app_id"], r["max_lsn"]) for r in facts if r["event"] == "bootstrap" and r["app_id"].endswith("seeded")] == \
        [(f"{CI}-seeded", lsn)]

    # Parquet files with other spellings and an extra column, as another tool writes them.
    table = pa.Table.from_pylist([{k.upper(): v for k, v in r.items() if not k.startswith("_")} | {"EXTRA": 1}
                                  for r in copy_rows])
    (tmp_path / "parquet").mkdir()
    pq.write_table(table.slice(0, 10), tmp_path / "parquet" / "part-0.parquet")
    pq.write_table(table.slice(10), tmp_path / "parquet" / "part-1.parquet")
    cli("seed", pipeline(tmp_path, "from_parquet", bootstrap=True), "--table", CI, "--from-parquet",
        tmp_path / "parquet", "--as-of-lsn", lsn)
    from_parquet = DeltaTable(str(tmp_path / "lake" / "from_parquet" / CI)).to_pyarrow_table().to_pylist()
    assert sorted((r["customer_id"], r["name"]) for r in from_parquet) == \
        sorted((r["customer_id"], r["name"]) for r in copy_rows)
    assert {(r["_operation"], r["_start_lsn"], r["_snapshot"]) for r in from_parquet} == {(0, lsn, lsn)}


def test_bad_seeds_exit_2_with_one_line_and_write_nothing(cli, tmp_path):
    make_db(cli, tmp_path)
    cli("run", pipeline(tmp_path, "copy", bootstrap=True))
    copy = tmp_path / "lake" / "copy" / CI
    lsn = DeltaTable(str(copy)).to_pyarrow_table().to_pylist()[0]["_snapshot"]
    no_key = tmp_path / "no_key.parquet"
    pq.write_table(DeltaTable(str(copy)).to_pyarrow_table().drop(["customer_id"]), no_key)
    target = pipeline(tmp_path, "target", bootstrap=True)
    cases = [
        (["--from-parquet", no_key, "--as-of-lsn", lsn], "lacks key column(s) customer_id"),
        (["--from-delta", copy, "--as-of-time", "2999-01-01 00:00:00"], "is in the future"),
        (["--from-delta", copy, "--as-of-lsn", "0xFFFFFFFF000000000001"], "above the max LSN"),
        (["--from-delta", tmp_path / "nothing", "--as-of-lsn", lsn], "is not a Delta table"),
        (["--from-delta", copy], "--as-of-time TIME (UTC) or --as-of-lsn LSN"),
        (["--from-delta", copy, "--from-parquet", no_key, "--as-of-lsn", lsn], "excludes"),
        (["--from-delta", copy, "--as-of-time", "yesterday"], "is not a time"),
    ]
    for args, message in cases:
        result = cli("seed", target, "--table", CI, *args, check=False)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert not (tmp_path / "lake" / "target").exists()
    result = cli("seed", target, "--table", "dbo_nope", "--from-delta", copy, "--as-of-lsn", lsn, check=False)
    assert result.returncode == 2 and "has no table 'dbo_nope'" in result.stderr
