"""What the object-store tests share: running the engine against an emulator (s3_emulator.py,
azure_emulator.py), a pipeline with every table and checkpoint in the store, and bronze read
back by delta-rs."""

import collections
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from helpers import BINARY, TABLES, change_table_keys  # noqa: E402


def run(store, *args, env=None, check=True, timeout=300):
    result = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True,
                            env=env or store.env(), timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"mssql-cdc {' '.join(map(str, args))} failed:\n{result.stderr}")
    return result


def make_db(store, tmp_path, transactions=150, manual_clock=False):
    db = tmp_path / "shop.sim"
    clock = ["--clock", "manual", "--start", "2026-01-01 00:00:00"] if manual_clock else []
    run(store, "sim", "create", "--db", db, *clock)
    run(store, "sim", "demo-schema", "--db", db)
    run(store, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", transactions,
        "--seed", 3, "--statements", 2)
    return db


def write_pipeline(tmp_path, root, trigger="availableNow", source="", stream="", tables=None):
    """A pipeline with every table and checkpoint under `root` ("s3://bucket")."""
    lake = f"{root}/lake"
    tables_text = tables if tables is not None else "tables = " + json.dumps(TABLES)
    path = tmp_path / "pipeline.toml"
    path.write_text(f"""{tables_text}

[source]
backend = "sim"
simPath = "shop.sim"
{source}

[stream]
target = "{lake}/bronze/{{ci}}"
app_id = "{{ci}}-v1"
checkpoint = "{root}/checkpoints/{{ci}}"
facts_table = "{lake}/ops/facts"
control_table = "{lake}/ops/control"
trigger = "{trigger}"
{stream}
""")
    return path


def summary(result):
    return json.loads(result.stdout.splitlines()[-1])


def bronze_keys(store, root, ci):
    table = DeltaTable(f"{root}/lake/bronze/{ci}", storage_options=store.storage_options())
    rows = table.to_pyarrow_table(columns=["_start_lsn", "_seqval", "_operation"]).to_pylist()
    return [(r["_start_lsn"], r["_seqval"], r["_operation"]) for r in rows if r["_operation"] != 0]


def assert_bronze_equals_change_tables(store, root, db, tables=TABLES):
    for ci in tables:
        source = change_table_keys(db, ci)
        bronze = bronze_keys(store, root, ci)
        assert source, ci
        duplicates = [k for k, n in collections.Counter(bronze).items() if n > 1]
        assert not duplicates, (ci, duplicates[:5])
        assert sorted(bronze) == sorted(source), ci


def refused(store, tmp_path, pipeline, env=None, secrets=()):
    """Runs the pipeline, expecting one clear refusal before anything is written: exit status
    2, one line, no local directory made, and none of `secrets` in any output."""
    result = run(store, "run", pipeline, env=env, check=False)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("mssql-cdc:")]
    assert len(lines) == 1, result.stderr
    for secret in secrets:
        assert secret not in result.stderr + result.stdout
    assert not (tmp_path / "lake").exists() and not (tmp_path / "checkpoints").exists()
    return lines[0]


def place_name(request):
    """A bucket or container name of the test's own: its name, shortened, and a hash of the
    whole (parameters included), as every store's naming rules allow."""
    name = request.node.name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return "lake-" + "".join(c for c in name.lower() if c.isalnum())[:40] + "-" + digest
