"""`mssql-cdc optimize` and `mssql-cdc vacuum` next to a running `mssql-cdc run`: 12 trials, each
killing `run` (and, in turns, the optimize or vacuum itself) with SIGKILL at a random moment
under a workload. At the end every bronze table still equals its change table row for row,
silver equals its source table, the small files were compacted, no file a version names was
vacuumed, and a killed writer's files are gone. Bad input changes nothing.

The seed of the kill schedule is printed, and MSSQL_CDC_CRASH_SEED replays one.
"""

import collections
import json
import os
import random
import signal
import subprocess
import time

import pytest

from deltalake import DeltaTable

from helpers import BINARY, TABLES, bronze_keys, change_table_keys, pipeline_text
from sim_workload import stop_workload
from test_silver_cli import COLUMNS, silver_rows, source_rows

TRIALS = 12
SOURCE = 'simPath = "shop.sim"\nmaxCommitsPerBatch = 25'
SILVER = '\n[silver]\ntarget = "lake/silver/{ci}"\n'
# A retention of 3.6 s: long next to these batches (tens of ms), short enough to vacuum here.
RETENTION_HOURS = "0.001"


def maintenance(pipeline, *args):
    return subprocess.Popen([BINARY, *args, str(pipeline)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=pipeline.parent)


@pytest.mark.sigkill
def test_optimize_and_vacuum_next_to_a_stream_killed_12_times(cli, tmp_path):
    seed = int(os.environ.get("MSSQL_CDC_CRASH_SEED", random.randrange(1 << 30)))
    print(f"kill schedule seed {seed} (MSSQL_CDC_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=100 ms", SOURCE) + SILVER)
    workload = subprocess.Popen([BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
                                 "--statements", "3", "--seed", str(seed)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    compactions = 0
    try:
        time.sleep(0.5)
        for trial in range(TRIALS):
            run = subprocess.Popen([BINARY, "run", "--json", str(pipeline)], cwd=tmp_path,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0.3, 1.0))
            tools = [maintenance(pipeline, "optimize", "--target-file-mb", "1"),
                     maintenance(pipeline, "vacuum", "--retention-hours", RETENTION_HOURS)]
            time.sleep(rng.uniform(0.0, 0.6))
            if trial % 4 == 3:
                tools[trial % 2].kill()  # a killed optimize or vacuum leaves nothing half done
            run.kill()
            run.communicate(timeout=30)
            for tool in tools:
                out, err = tool.communicate(timeout=120)
                assert tool.returncode in (0, -signal.SIGKILL), err
                compactions += out.count("files compacted")
    finally:
        stop_workload(workload)
    assert compactions > 0

    pipeline.write_text(pipeline_text("availableNow", SOURCE) + SILVER)
    summary = json.loads(cli("run", "--json", pipeline).stdout.splitlines()[-1])
    assert summary["failed"] == []
    assert maintenance(pipeline, "optimize", "--target-file-mb", "1").communicate(timeout=120)[0]
    time.sleep(4)  # past the retention: what the trials and the compaction left is old enough now
    vacuum = maintenance(pipeline, "vacuum", "--retention-hours", RETENTION_HOURS)
    assert vacuum.communicate(timeout=120) and vacuum.returncode == 0

    for ci in TABLES:
        source = change_table_keys(db, ci)
        bronze = bronze_keys(tmp_path / "lake" / "bronze" / ci)
        assert len(source) > 100, ci
        assert not [k for k, n in collections.Counter(bronze).items() if n > 1], ci
        assert sorted(bronze) == sorted(source), ci
        assert silver_rows(tmp_path, ci) == source_rows(db, ci), ci
    for table_dir in [tmp_path / "lake" / "bronze" / ci for ci in TABLES] + [tmp_path / "lake" / "ops" / "facts"]:
        table = DeltaTable(str(table_dir))
        named = {os.path.basename(f) for f in table.file_uris()}
        on_disk = {p.name for p in table_dir.glob("*.parquet")}
        assert named <= on_disk, (table_dir, sorted(named - on_disk)[:3])  # nothing named was deleted
        assert on_disk == named, (table_dir, sorted(on_disk - named)[:3])  # nothing forgotten is left
        assert not list(table_dir.glob(".*.tmp")) and not list((table_dir / "_delta_log").glob(".*.tmp"))
        operations = [h["operation"] for h in table.history()]
        assert "OPTIMIZE" in operations, table_dir
    facts = DeltaTable(str(tmp_path / "lake" / "ops" / "facts")).to_pyarrow_table().to_pylist()
    batch_rows = collections.Counter((r["app_id"], r["batch_id"]) for r in facts if r["event"] is None)
    assert batch_rows and max(batch_rows.values()) == 1


def test_old_batch_facts_go_and_bad_input_changes_nothing(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 60, "--seed", 2, "--statements", 3)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("availableNow", 'sim_path = "shop.sim"\nsourceTimeZone = "UTC"',
                                      stream_extra="bootstrap = true"))
    cli("run", pipeline)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 30, "--seed", 3, "--statements", 3)
    cli("run", pipeline)  # micro-batches after the bootstrap's event rows
    facts_dir = tmp_path / "lake" / "ops" / "facts"
    version = DeltaTable(str(facts_dir)).version()
    for args, says in [(["vacuum", "--retention-hours", "0.0000001"], "is not longer than the longest batch"),
                       (["vacuum", "--table", "dbo_nope"], "'dbo_nope' is not one of the pipeline's tables"),
                       (["optimize", "--target-file-mb", "0"], "--target-file-mb")]:
        done = subprocess.run([BINARY, *args, str(pipeline)], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 2 and says in done.stderr, done.stderr
    assert DeltaTable(str(facts_dir)).version() == version

    rows = DeltaTable(str(facts_dir)).to_pyarrow_table().to_pylist()
    events = [r for r in rows if r["event"] is not None]
    assert events and [r for r in rows if r["event"] is None]
    # Facts rows are written now: a retention of a millionth of a day (0.09 s) makes them old.
    time.sleep(0.2)
    batches = len(rows) - len(events)
    dry = subprocess.run([BINARY, "vacuum", "--dry-run", "--facts-retention-days", "0.000001", str(pipeline)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert f"{batches} micro-batch facts rows older than 1e-06 days would be deleted" in dry.stdout, dry.stdout
    assert DeltaTable(str(facts_dir)).version() == version
    done = subprocess.run([BINARY, "vacuum", "--facts-retention-days", "0.000001", str(pipeline)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{batches} micro-batch facts rows older than 1e-06 days deleted" in done.stdout, done.stdout
    after = DeltaTable(str(facts_dir)).to_pyarrow_table().to_pylist()
    assert [r for r in after if r["event"] is None] == []
    assert sorted(json.dumps(r, default=str, sort_keys=True) for r in after) == \
        sorted(json.dumps(r, default=str, sort_keys=True) for r in events)


def test_run_compacts_and_vacuums_on_its_own_schedule(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db)
    cli("sim", "demo-schema", "--db", db)
    schedule = ('\n[maintenance]\noptimize_every_hours = 0.0004\nvacuum_every_hours = 0.0006\n'
                'vacuum_retention_hours = 0.0005\ntarget_file_mb = 1\n')
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(pipeline_text("processingTime=100 ms", SOURCE) + schedule)
    workload = subprocess.Popen([BINARY, "sim", "workload", "--db", str(db), "--tps", "150", "--duration", "300",
                                 "--statements", "3", "--seed", "5"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        done = subprocess.run([BINARY, "run", "--json", str(pipeline), "--timeout", "8"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    finally:
        stop_workload(workload)
    assert done.returncode == 0, done.stderr
    assert "files compacted into" in done.stderr and "vacuum deleted" in done.stderr, done.stderr
    pipeline.write_text(pipeline_text("availableNow", SOURCE) + schedule)
    cli("run", pipeline)
    for ci in TABLES:
        bronze_dir = tmp_path / "lake" / "bronze" / ci
        assert "OPTIMIZE" in [h["operation"] for h in DeltaTable(str(bronze_dir)).history()], ci
        assert sorted(bronze_keys(bronze_dir)) == sorted(change_table_keys(db, ci)), ci

    for bad, says in [("optimize_every_hours = 0", "must be a number above 0"),
                      ("vacuum_every = 1", "unknown key 'vacuum_every' in [maintenance]"),
                      ("facts_retention_days = 3", "set vacuum_every_hours"),
                      ("vacuum_every_hours = 1\nvacuum_retention_hours = 0.0000001", "longest batch")]:
        pipeline.write_text(pipeline_text("availableNow", SOURCE) + "\n[maintenance]\n" + bad + "\n")
        refused = subprocess.run([BINARY, "run", str(pipeline)], cwd=tmp_path, capture_output=True, text=True,
                                 timeout=120)
        assert refused.returncode == 2 and says in refused.stderr, (bad, refused.stderr)
