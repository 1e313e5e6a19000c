"""Tables past several checkpoints, schema evolution, upserts and replayed appends, read back by
delta-rs and by Spark with delta-spark."""

import json
import shutil
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import DeltaProtocolError

import mssql_cdc
from delta_interop import log_commits, log_txn_versions

EVENT = pa.schema([
    pa.field("batch", pa.int64(), nullable=False),
    pa.field("seq", pa.int32(), nullable=False),
    pa.field("note", pa.string()),
])


def batch_rows(batch, n):
    return [{"batch": batch, "seq": s, "note": None if s % 4 == 0 else f"b{batch}s{s}"} for s in range(n)]


def batch_table(batch, n):
    return pa.Table.from_pylist(batch_rows(batch, n), schema=EVENT)


# --- a table past several checkpoints ------------------------------------------------------

COMMITS = 27  # appends after the create: versions 1..27, checkpoints at 10 and 20


@pytest.fixture(scope="module")
def long_table(core, tmp_path_factory):
    path = tmp_path_factory.mktemp("checkpoints") / "events"
    core.delta_create(str(path), EVENT, properties={"mssql_cdc.schema_version": "1"})
    expected = []
    for b in range(1, COMMITS + 1):
        n = 3 + b % 5
        r = core.delta_append(str(path), batch_table(b, n), app_id="stream-a", version=b - 1)
        assert r["written"] and r["version"] == b and r["attempts"] == 1
        expected += batch_rows(b, n)
    key = lambda r: (r["batch"], r["seq"])  # noqa: E731
    return path, sorted(expected, key=key)


def sorted_rows(rows):
    return sorted(rows, key=lambda r: (r["batch"], r["seq"]))


def test_checkpoints_and_last_checkpoint_are_written(long_table):
    path, _ = long_table
    log = path / "_delta_log"
    assert (log / f"{10:020d}.checkpoint.parquet").is_file()
    assert (log / f"{20:020d}.checkpoint.parquet").is_file()
    last = json.loads((log / "_last_checkpoint").read_text())
    assert last["version"] == 20
    # The checkpoint holds protocol, metadata, the txn and one add per live file.
    checkpoint = pq.read_table(log / f"{20:020d}.checkpoint.parquet").to_pylist()
    assert last["size"] == len(checkpoint)
    adds = [r["add"] for r in checkpoint if r.get("add")]
    txns = [r["txn"] for r in checkpoint if r.get("txn")]
    assert sum(1 for r in checkpoint if r.get("metaData")) == 1
    assert sum(1 for r in checkpoint if r.get("protocol")) == 1
    assert len(adds) == sum(
        1 for v, actions in log_commits(path).items() if v <= 20 for a in actions if "add" in a
    )
    assert [(t["appId"], t["version"]) for t in txns] == [("stream-a", 19)]


def test_delta_rs_reads_a_table_past_checkpoints(long_table):
    path, expected = long_table
    table = DeltaTable(str(path))
    assert table.version() == COMMITS
    assert sorted_rows(table.to_pyarrow_table().to_pylist()) == expected
    assert table.transaction_version("stream-a") == COMMITS - 1
    assert table.metadata().configuration["mssql_cdc.schema_version"] == "1"
    # Time travel to a version before the last checkpoint.
    table.load_as_version(15)
    assert sorted_rows(table.to_pyarrow_table().to_pylist()) == [r for r in expected if r["batch"] <= 15]


def test_spark_reads_a_table_past_checkpoints(spark, long_table):
    path, expected = long_table
    assert sorted_rows(spark.read.format("delta").load(str(path)).toArrow().to_pylist()) == expected
    v15 = spark.read.format("delta").option("versionAsOf", 15).load(str(path)).toArrow().to_pylist()
    assert sorted_rows(v15) == [r for r in expected if r["batch"] <= 15]
    versions = [r["version"] for r in spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()]
    assert max(versions) == COMMITS


def test_readers_rely_on_the_checkpoint_alone(core, spark, long_table, tmp_path):
    """With the commits the checkpoint covers deleted (as log cleanup would), every reader
    must build the table from the engine's checkpoint."""
    path, expected = long_table
    copy = tmp_path / "events"
    shutil.copytree(path, copy)
    for v in range(0, 21):
        (copy / "_delta_log" / f"{v:020d}.json").unlink()
    assert sorted_rows(DeltaTable(str(copy)).to_pyarrow_table().to_pylist()) == expected
    assert DeltaTable(str(copy)).transaction_version("stream-a") == COMMITS - 1
    assert sorted_rows(spark.read.format("delta").load(str(copy)).toArrow().to_pylist()) == expected
    assert sorted_rows(pa.table(core.delta_read(str(copy))).to_pylist()) == expected
    snap = core.delta_snapshot(str(copy))
    assert snap["version"] == COMMITS and snap["app_versions"] == {"stream-a": COMMITS - 1}
    # And the engine writes on top of it: the next append lands at the next version.
    r = core.delta_append(str(copy), batch_table(99, 2), app_id="stream-a", version=COMMITS)
    assert r["version"] == COMMITS + 1
    assert DeltaTable(str(copy)).version() == COMMITS + 1


# --- exactly once ------------------------------------------------------------------------------


def test_replayed_append_writes_nothing(core, spark, tmp_path):
    path = tmp_path / "replay"
    core.delta_create(str(path), EVENT)
    first = core.delta_append(str(path), batch_table(1, 5), app_id="app", version=0)
    assert first["written"] and first["version"] == 1
    core.delta_append(str(path), batch_table(2, 5), app_id="other", version=41)
    files_before = sorted(p.name for p in path.iterdir())
    log_before = sorted(p.name for p in (path / "_delta_log").iterdir())

    again = core.delta_append(str(path), batch_table(1, 5), app_id="app", version=0)
    assert not again["written"]
    assert again["version"] == 1  # the version that holds app's version 0
    assert again["rows"] == 0 and again["files"] == 0
    older = core.delta_append(str(path), batch_table(0, 5), app_id="other", version=40)
    assert not older["written"] and older["version"] == 2

    assert sorted(p.name for p in path.iterdir()) == files_before  # no data file either
    assert sorted(p.name for p in (path / "_delta_log").iterdir()) == log_before
    table = DeltaTable(str(path))
    assert table.version() == 2
    assert table.transaction_version("app") == 0
    assert table.transaction_version("other") == 41
    expected = sorted_rows(batch_rows(1, 5) + batch_rows(2, 5))
    assert sorted_rows(table.to_pyarrow_table().to_pylist()) == expected
    assert sorted_rows(spark.read.format("delta").load(str(path)).toArrow().to_pylist()) == expected

    nxt = core.delta_append(str(path), batch_table(3, 1), app_id="app", version=1)
    assert nxt["written"] and nxt["version"] == 3
    assert DeltaTable(str(path)).transaction_version("app") == 1


# --- schema evolution --------------------------------------------------------------------------


def test_new_column_is_added_and_read_by_both(core, spark, tmp_path):
    path = tmp_path / "evolving"
    core.delta_create(str(path), EVENT)
    core.delta_append(str(path), batch_table(1, 3))
    wider = EVENT.append(pa.field("extra", pa.decimal128(10, 3), metadata={"comment": "added later"}))
    new_rows = [dict(r, extra=None if r["seq"] == 1 else Decimal(r["seq"] * 1500).scaleb(-3))
                for r in batch_rows(2, 3)]
    r = core.delta_append(str(path), pa.Table.from_pylist(new_rows, schema=wider))
    assert r["written"] and r["version"] == 2
    expected = sorted_rows([dict(x, extra=None) for x in batch_rows(1, 3)] + new_rows)

    table = DeltaTable(str(path))
    assert [f.name for f in table.schema().fields] == ["batch", "seq", "note", "extra"]
    extra = table.schema().fields[3]
    assert extra.type.type == "decimal(10,3)" and extra.nullable
    assert extra.metadata.get("comment") == "added later"
    assert sorted_rows(table.to_pyarrow_table().to_pylist()) == expected

    df = spark.read.format("delta").load(str(path))
    assert [f.name for f in df.schema.fields] == ["batch", "seq", "note", "extra"]
    assert df.schema["extra"].dataType.simpleString() == "decimal(10,3)"
    assert sorted_rows(df.toArrow().to_pylist()) == expected
    assert sorted_rows(pa.table(core.delta_read(str(path))).to_pylist()) == expected

    # Old-shape data after the change: the missing column is NULL.
    core.delta_append(str(path), batch_table(3, 2))
    expected += [dict(x, extra=None) for x in batch_rows(3, 2)]
    assert sorted_rows(spark.read.format("delta").load(str(path)).toArrow().to_pylist()) == sorted_rows(expected)
    assert sorted_rows(DeltaTable(str(path)).to_pyarrow_table().to_pylist()) == sorted_rows(expected)


def test_schema_changes_the_table_cannot_take_fail_without_writing(core, tmp_path):
    path = tmp_path / "strict"
    core.delta_create(str(path), EVENT)
    core.delta_append(str(path), batch_table(1, 3))
    wider = EVENT.append(pa.field("extra", pa.int32()))
    with pytest.raises(mssql_cdc.SchemaChangedError, match="extra"):
        core.delta_append(str(path), pa.table({"batch": [1], "seq": [9], "note": ["x"], "extra": [1]},
                                              schema=wider), merge_schema=False)
    retyped = pa.schema([EVENT.field("batch"), pa.field("seq", pa.string()), EVENT.field("note")])
    with pytest.raises(mssql_cdc.SchemaChangedError, match="seq"):
        core.delta_append(str(path), pa.table({"batch": [1], "seq": ["9"], "note": ["x"]}, schema=retyped))
    # int64 into an int32 column: a widening the table does not allow without type widening.
    widened = pa.schema([EVENT.field("batch"), pa.field("seq", pa.int64()), EVENT.field("note")])
    with pytest.raises(mssql_cdc.SchemaChangedError, match="seq"):
        core.delta_append(str(path), pa.table({"batch": [1], "seq": [2**40], "note": ["x"]}, schema=widened))
    assert DeltaTable(str(path)).version() == 1
    assert len(log_commits(path)) == 2
    assert len(list(path.glob("*.parquet"))) == 1


def test_type_widening_when_the_table_enables_it(core, spark, tmp_path):
    path = tmp_path / "widening"
    core.delta_create(str(path), EVENT, properties={"delta.enableTypeWidening": "true"})
    core.delta_append(str(path), batch_table(1, 2))
    widened = pa.schema([EVENT.field("batch"), pa.field("seq", pa.int64(), nullable=False), EVENT.field("note")])
    r = core.delta_append(str(path), pa.table({"batch": [2], "seq": [2**40], "note": ["big"]}, schema=widened))
    assert r["written"]
    expected = sorted_rows(batch_rows(1, 2) + [{"batch": 2, "seq": 2**40, "note": "big"}])
    df = spark.read.format("delta").load(str(path))
    assert df.schema["seq"].dataType.simpleString() == "bigint"
    assert sorted_rows(df.toArrow().to_pylist()) == expected
    assert sorted_rows(pa.table(core.delta_read(str(path))).to_pylist()) == expected
    protocol = DeltaTable(str(path)).protocol()
    assert "typeWidening" in (protocol.reader_features or [])
    # delta-rs (deltalake 1.6) does not implement the typeWidening reader feature: it must
    # refuse the table rather than misread it. When it learns the feature, read rows here.
    with pytest.raises(DeltaProtocolError, match="typeWidening"):
        DeltaTable(str(path)).to_pyarrow_table()


# --- upserts -----------------------------------------------------------------------------------

CONTROL = pa.schema([
    pa.field("table_name", pa.string(), nullable=False),
    pa.field("finalized_until", pa.string()),
    pa.field("batches", pa.int64()),
])


def control_rows(rows):
    return sorted(rows, key=lambda r: r["table_name"])


def test_upsert_replaces_rows_by_key_and_both_readers_agree(core, spark, tmp_path):
    path = tmp_path / "control"
    core.delta_create(str(path), CONTROL, properties={"mssql_cdc.schema_version": "1"})
    state = {}
    for step in range(12):  # past a checkpoint, with removes in it
        names = [f"dbo.t{(step + i) % 5}" for i in range(3)]
        rows = [{"table_name": n, "finalized_until": f"0x{step:020X}", "batches": step} for n in names]
        r = core.delta_upsert(str(path), "table_name", pa.Table.from_pylist(rows, schema=CONTROL))
        assert r["written"] and r["version"] == step + 1
        for row in rows:
            state[row["table_name"]] = row
    expected = control_rows(state.values())

    table = DeltaTable(str(path))
    assert control_rows(table.to_pyarrow_table().to_pylist()) == expected
    assert len(table.file_uris()) == 1  # copy-on-write: one live file
    assert control_rows(spark.read.format("delta").load(str(path)).toArrow().to_pylist()) == expected
    assert control_rows(pa.table(core.delta_read(str(path))).to_pylist()) == expected
    last = log_commits(path)[12]
    assert sum("remove" in a for a in last) >= 1 and sum("add" in a for a in last) == 1
    assert core.delta_snapshot(str(path))["num_files"] == 1
    # An upsert with a key filter read.
    got = pa.table(core.delta_read(str(path), [("table_name", "=", "dbo.t2")])).to_pylist()
    assert got == [state["dbo.t2"]]


# --- reading tables that others wrote ----------------------------------------------------------


def test_engine_reads_and_appends_to_a_delta_rs_table_with_a_checkpoint(core, spark, tmp_path):
    path = tmp_path / "from_delta_rs"
    expected = []
    for b in range(12):
        write_deltalake(str(path), batch_table(b, 3), mode="append")
        expected += batch_rows(b, 3)
    DeltaTable(str(path)).create_checkpoint()
    snap = core.delta_snapshot(str(path))
    assert snap["version"] == 11
    assert sorted_rows(pa.table(core.delta_read(str(path))).to_pylist()) == sorted_rows(expected)
    r = core.delta_append(str(path), batch_table(100, 4), app_id="engine", version=0)
    assert r["version"] == 12
    expected += batch_rows(100, 4)
    assert sorted_rows(DeltaTable(str(path)).to_pyarrow_table().to_pylist()) == sorted_rows(expected)
    assert sorted_rows(spark.read.format("delta").load(str(path)).toArrow().to_pylist()) == sorted_rows(expected)
    assert log_txn_versions(path, "engine") == {0: 12}
