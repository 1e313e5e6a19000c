"""Bad input: a path that is not a Delta table, a log with a missing or corrupt commit, a
checkpoint that does not match _last_checkpoint. Each is a clear error naming the file, never a
silently empty table, and never a write on top of a log that could not be read."""

import json
import os

import pyarrow as pa
import pytest

import mssql_cdc

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def rows(start, n=3):
    return pa.table({"id": list(range(start, start + n)), "v": [f"r{i}" for i in range(start, start + n)]},
                    schema=SCHEMA)


def tree(path):
    """Every file under path with its size and mtime: a write would change it."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            st = os.stat(os.path.join(root, f))
            out[os.path.relpath(os.path.join(root, f), path)] = (st.st_size, st.st_mtime_ns)
    return out


def assert_every_call_fails(core, path, match, cls=mssql_cdc.SourceError):
    """Reads and writes all fail with `cls`, naming `match`, and nothing is written."""
    before = tree(path) if path.exists() else None
    for call in (
        lambda: core.delta_snapshot(str(path)),
        lambda: pa.table(core.delta_read(str(path))),
        lambda: core.delta_append(str(path), rows(100), app_id="app", version=99),
        lambda: core.delta_upsert(str(path), "id", rows(100)),
    ):
        with pytest.raises(cls) as info:
            call()
        assert match in str(info.value), f"error does not name {match!r}: {info.value}"
    after = tree(path) if path.exists() else None
    assert after == before, "a failed call changed the table's files"


@pytest.fixture
def table(core, tmp_path):
    """A table at version 12 with a checkpoint at 10."""
    path = tmp_path / "t"
    core.delta_create(str(path), SCHEMA)
    for i in range(12):
        core.delta_append(str(path), rows(i * 10), app_id="app", version=i)
    assert (path / "_delta_log" / f"{10:020d}.checkpoint.parquet").exists()
    return path


def log_file(path, version, suffix="json"):
    return path / "_delta_log" / f"{version:020d}.{suffix}"


def test_a_path_that_is_not_a_delta_table(core, tmp_path):
    missing = tmp_path / "nothing-here"
    assert not core.delta_exists(str(missing))
    assert_every_call_fails(core, missing, str(missing))
    assert not missing.exists()

    plain = tmp_path / "plain-dir"
    plain.mkdir()
    (plain / "data.parquet").write_bytes(b"not a table")
    assert not core.delta_exists(str(plain))
    assert_every_call_fails(core, plain, str(plain))
    assert not (plain / "_delta_log").exists()

    empty_log = tmp_path / "empty-log"
    (empty_log / "_delta_log").mkdir(parents=True)
    assert_every_call_fails(core, empty_log, str(empty_log))


def test_a_missing_commit_is_named(core, table):
    log_file(table, 11).unlink()  # after the checkpoint at 10, before the newest (12)
    assert_every_call_fails(core, table, f"{11:020d}.json")


def test_a_missing_commit_before_any_checkpoint_is_named(core, tmp_path):
    path = tmp_path / "young"
    core.delta_create(str(path), SCHEMA)
    for i in range(5):
        core.delta_append(str(path), rows(i * 10))
    log_file(path, 2).unlink()
    assert_every_call_fails(core, path, f"{2:020d}.json")


def test_a_corrupt_commit_is_named(core, table):
    f = log_file(table, 12)
    f.write_text(f.read_text()[:-40] + "\n{not json\n")
    assert_every_call_fails(core, table, f"{12:020d}.json")


def test_a_commit_with_a_malformed_action_is_named(core, table):
    f = log_file(table, 11)
    lines = f.read_text().splitlines()
    lines = [json.dumps({"add": {"path": 42}}) if '"add"' in ln else ln for ln in lines]
    f.write_text("\n".join(lines) + "\n")
    assert_every_call_fails(core, table, f"{11:020d}.json")


def test_a_checkpoint_missing_that_last_checkpoint_names(core, table):
    log_file(table, 10, "checkpoint.parquet").unlink()
    assert_every_call_fails(core, table, f"{10:020d}.checkpoint.parquet")


def test_a_checkpoint_whose_size_disagrees_with_last_checkpoint(core, table):
    last = table / "_delta_log" / "_last_checkpoint"
    info = json.loads(last.read_text())
    info["size"] += 5
    last.write_text(json.dumps(info))
    assert_every_call_fails(core, table, f"{10:020d}.checkpoint.parquet")


def test_a_corrupt_checkpoint_is_named(core, table):
    f = log_file(table, 10, "checkpoint.parquet")
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    assert_every_call_fails(core, table, f"{10:020d}.checkpoint.parquet")


def test_a_good_table_still_reads_after_the_checks(core, table):
    """The fixture's table, untouched, reads whole: the failures above come from the damage."""
    snap = core.delta_snapshot(str(table))
    assert snap["version"] == 12 and snap["app_versions"] == {"app": 11}
    assert pa.table(core.delta_read(str(table))).num_rows == 36


def test_bad_arguments_are_config_errors(core, table):
    with pytest.raises(mssql_cdc.ConfigError, match="nope"):
        pa.table(core.delta_read(str(table), [("nope", "=", 1)]))
    with pytest.raises(mssql_cdc.ConfigError):
        pa.table(core.delta_read(str(table), [("id", "~", 1)]))
    with pytest.raises(mssql_cdc.ConfigError, match="app_id"):
        core.delta_append(str(table), rows(0), version=3)
    with pytest.raises(mssql_cdc.ConfigError, match="__arrow_c_stream__"):
        core.delta_append(str(table), [1, 2, 3])
    with pytest.raises(mssql_cdc.ConfigError, match="__arrow_c_schema__"):
        core.delta_create(str(table) + "-x", {"id": "long"})
    with pytest.raises(mssql_cdc.ConfigError):
        core.delta_append(str(table), rows(0), compression="lz5")
    with pytest.raises(mssql_cdc.ConfigError, match="the scheme 'hdfs' names no store.*s3://"):
        core.delta_snapshot("hdfs://namenode/table")
    assert core.delta_snapshot(str(table))["version"] == 12
