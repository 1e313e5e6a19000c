"""Spark mode's core calls (`_core.Feed`, `read_range`, tables, facts, bootstrap, verdicts) on
simulated databases: the same decisions, rows and facts as a native stream (`mssql-cdc run`),
in the Arrow form Spark takes."""

import json
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

import mssql_cdc
from mssql_cdc import _core

APP = "dbo_items-v1"
OUTPUT_COLUMNS = ["_capture_instance", "_start_lsn", "_seqval", "_operation", "_command_id",
                  "_commit_ts"]
# Facts columns filled from the read's measures: NULL without metrics.
MEASURED = ["source_rtt_ms", "read_seconds", "read_mb", "network_wait_ms",
            "retention_watermark_ts", "retention_headroom_hours", "source_max_commit_ts",
            "capture_lag_seconds", "ingestion_lag_seconds"]
# Of those, the ones a batch's rows and the source's state fix: the same in both modes.
MEASURED_EXACTLY = ["retention_watermark_ts", "retention_headroom_hours", "source_max_commit_ts",
                    "ingestion_lag_seconds"]


def spark_arrow(schema_json):
    """The Arrow schema Spark gives the StructType of `schema_json`."""
    return to_arrow_schema(StructType.fromJson(json.loads(schema_json)), timezone="UTC")


def dml(cli, db, *statements):
    cli("sim", "clock", "--db", db, "--advance", 60)
    cli("sim", "dml", "--db", db, "--json", json.dumps(list(statements)))


def insert(row):
    return {"op": "insert", "table": "dbo.items", "row": row}


def sim_info(cli, db):
    return json.loads(cli("sim", "info", "--db", db, "--json").stdout)


def min_lsn(db):
    return _core.open_sim_source(str(db)).min_lsn("dbo_items")


def read_all(options, ranges):
    """The batches of every range, iterated as pyarrow.RecordBatch objects."""
    return [batch for frm, to, instance in ranges
            for batch in _core.read_range(options, frm, to, capture_instance=instance)]


def in_change_order(table):
    return table.sort_by([("_start_lsn", "ascending"), ("_command_id", "ascending"),
                          ("_seqval", "ascending"), ("_operation", "ascending")])


def row_stats(table):
    """What the Spark sink aggregates of a batch's rows, for _core.batch_facts."""
    op = table.column("_operation")
    ts = table.column("_commit_ts").cast(pa.int64())
    has_rows = table.num_rows > 0
    return {
        "rows": table.num_rows,
        "deletes": pc.sum(pc.equal(op, 1)).as_py() or 0,
        "inserts": pc.sum(pc.equal(op, 2)).as_py() or 0,
        "updates": pc.sum(pc.equal(op, 4)).as_py() or 0,
        "min_lsn": pc.min(table.column("_start_lsn")).as_py() if has_rows else None,
        "max_lsn": pc.max(table.column("_start_lsn")).as_py() if has_rows else None,
        "min_commit_ts_us": pc.min(ts).as_py() if has_rows else None,
        "max_commit_ts_us": pc.max(ts).as_py() if has_rows else None,
    }


def delta_table(path):
    return pa.RecordBatchReader.from_stream(_core.delta_read(str(path))).read_all()


def commit_user_metadata(table_path, app_id):
    """userMetadata of each commit of the table carrying txn(app_id, v), by v."""
    out = {}
    for log in sorted(Path(table_path, "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        txn = [a["txn"] for a in actions if "txn" in a and a["txn"]["appId"] == app_id]
        info = [a["commitInfo"] for a in actions if "commitInfo" in a]
        if txn and info:
            out[txn[0]["version"]] = info[0].get("userMetadata")
    return out


@pytest.fixture
def items(cli, tmp_path):
    """dbo.items in Pacific time: 8 commits of inserts, updates and deletes a minute apart."""
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-11-01 01:50:00",
        "--time-zone", "Pacific Standard Time")
    cli("sim", "create-table", "--db", db, "--table", "dbo.items",
        "--column", "id int not null", "--column", "name nvarchar(40)",
        "--column", "price decimal(10,2)", "--column", "qty smallint", "--column", "ok bit",
        "--column", "sold date", "--column", "seen datetimeoffset",
        "--column", "blob varbinary(16)", "--column", "at datetime2", "--key", "id")
    for i in range(1, 6):
        dml(cli, db, insert({"id": i, "name": f"item {i}", "price": f"{i}.25", "qty": i,
                             "ok": i % 2, "sold": "2026-10-3%d" % (i % 2), "blob": "0x0A0B",
                             "seen": "2026-10-31 10:00:00 +02:00", "at": "2026-10-31 10:00:00"}),
            insert({"id": 100 + i, "name": None}))
    dml(cli, db, {"op": "update", "table": "dbo.items", "key": {"id": 2}, "set": {"qty": 20}})
    dml(cli, db, {"op": "delete", "table": "dbo.items", "key": {"id": 3}})
    cli("sim", "idle", "--db", db)
    dml(cli, db, {"op": "update", "table": "dbo.items", "key": {"id": 4}, "set": {"name": "x"}},
        {"op": "delete", "table": "dbo.items", "key": {"id": 101}})
    return db


def options_for(db, **extra):
    options = {"backend": "sim", "simPath": str(db), "captureInstance": "dbo_items"}
    options.update({k: str(v) for k, v in extra.items()})
    return options


def run_native(cli, db, tmp_path, max_commits):
    """A native availableNow run of dbo_items with a facts table; returns its directory."""
    home = tmp_path / "native"
    home.mkdir()
    (home / "pipeline.toml").write_text(f"""tables = ["dbo_items"]

[source]
backend = "sim"
simPath = "{db}"
maxCommitsPerBatch = {max_commits}

[stream]
target = "lake/bronze/{{ci}}"
app_id = "{{ci}}-v1"
checkpoint = "checkpoints/{{ci}}"
facts_table = "lake/ops/facts"
trigger = "availableNow"
""")
    cli("run", home / "pipeline.toml")
    return home


def test_schemas_are_sparks_arrow_form_of_their_json(cli, items):
    options = options_for(items)
    feed = _core.Feed(options)
    assert feed.capture_instance == "dbo_items"
    schema_json = feed.spark_schema_json()
    expected = spark_arrow(schema_json)
    assert expected.names == OUTPUT_COLUMNS + ["id", "name", "price", "qty", "ok", "sold", "seen",
                                               "blob", "at"]
    assert expected.field("name").type == pa.string()
    assert expected.field("_commit_ts").type == pa.timestamp("us")
    assert expected.field("seen").type == pa.timestamp("us", tz="UTC")

    start = feed.initial_offset()
    frm, to, instance = feed.partitions(start, feed.latest_offset(start))[0]
    assert instance == "dbo_items"
    stream = _core.read_range(options, frm, to, capture_instance=instance)
    assert stream.schema == expected
    table = pa.RecordBatchReader.from_stream(stream).read_all()
    assert table.num_rows == sim_info(cli, items)["capture_instances"][0]["change_rows"]
    assert table.schema == expected
    for got, want in zip(table.schema, expected):
        assert got.nullable == want.nullable, got.name

    bronze_json = _core.bronze_schema_json(schema_json)
    bronze = StructType.fromJson(json.loads(bronze_json))
    assert bronze.fieldNames() == expected.names + ["_batch_id", "_snapshot", "_chunk"]
    assert "commit LSN" in bronze["_start_lsn"].metadata["comment"]
    assert bronze["id"].metadata == {}

    facts_batch, _, measured = _core.batch_facts(APP, 0, "t", {"rows": 0}, start, start, 0, 0)
    assert not measured
    assert all(facts_batch.column(name)[0].as_py() is None for name in MEASURED)
    assert facts_batch.schema == spark_arrow(_core.facts_schema_json())
    assert len(facts_batch.schema) == 29
    assert StructType.fromJson(json.loads(_core.control_schema_json())).fieldNames()[:2] == [
        "table_name", "finalized_until"]


def test_batches_ranges_rows_and_facts_are_those_of_a_native_stream(cli, items, tmp_path):
    native = run_native(cli, items, tmp_path, max_commits=2)
    native_facts = delta_table(native / "lake/ops/facts").to_pylist()
    native_batches = {row["batch_id"]: row for row in native_facts if row["event"] is None}
    native_bronze = delta_table(native / "lake/bronze/dbo_items")
    user_metadata = commit_user_metadata(native / "lake/bronze/dbo_items", APP)

    options = options_for(items, maxCommitsPerBatch=2, numPartitions=3, arrowBatchSize=2)
    feed = _core.Feed(options)
    start = feed.initial_offset()
    ends = []
    while (end := feed.latest_offset(start, 2)) != start:
        ends.append((start, end))
        start = end
    assert len(ends) == len(native_batches) == 5  # 9 commits and an idle entry, 2 a batch
    assert json.loads(start) == json.loads(feed.max_offset())

    read = []
    for batch_id, (start, end) in enumerate(ends):
        ranges = feed.partitions(start, end)
        batches, metrics = [], []
        for i, (frm, to, _) in enumerate(ranges):
            reading = _core.read_range(options, frm, to, measure_end=i == len(ranges) - 1)
            batches.extend(reading)
            metrics.append(reading.metrics_json())
        if not ranges:
            metrics.append(feed.empty_read_metrics(start, end))
        # A range of another batch is not this batch's, and a file that is not metrics is skipped.
        metrics.append(json.dumps({**json.loads(metrics[0]), "from_lsn": json.loads(start)["lsn"]}))
        metrics.append('{"not": "metrics"}')
        assert all(b.num_rows <= 2 for b in batches)
        rows = pa.Table.from_batches(batches, schema=spark_arrow(feed.spark_schema_json()))
        read.append(rows)
        mine = native_batches[batch_id]
        row_batch, metadata, measured = _core.batch_facts(APP, batch_id, mine["target"], row_stats(rows),
                                                          start, end, 1_700_000_000_000_000, 42, metrics)
        assert measured
        (row,) = row_batch.to_pylist()
        assert row["started_at"] == datetime(2023, 11, 14, 22, 13, 20)
        assert row["duration_ms"] == 42
        assert row["written_at"] is not None
        for name in MEASURED_EXACTLY:
            assert row[name] is not None and row[name] == mine[name], (batch_id, name)
        assert abs(row["capture_lag_seconds"] - mine["capture_lag_seconds"]) < 300
        assert row["source_rtt_ms"] is None and mine["source_rtt_ms"] is None  # sim: no server
        assert row["network_wait_ms"] is None and mine["network_wait_ms"] is None
        assert row["read_seconds"] >= 0 and (row["read_mb"] > 0) == (row["rows"] > 0)
        if not ranges:
            assert row["read_mb"] == mine["read_mb"] == 0.0
        for name in ["app_id", "batch_id", "rows", "min_lsn", "max_lsn", "min_commit_ts",
                     "max_commit_ts", "deletes", "inserts", "updates", "event", "lost_from_ts",
                     "lost_to_ts", "end_lsn", "end_commit_ts", "detail", "target"]:
            assert row[name] == mine[name], (batch_id, name)
        if row["rows"]:
            assert json.loads(metadata) == json.loads(user_metadata[batch_id])
        else:
            assert batch_id not in user_metadata  # no rows, no bronze commit
            assert ranges == [] or sum(b.num_rows for b in batches) == 0

    columns = [f.name for f in spark_arrow(feed.spark_schema_json())]
    assert in_change_order(pa.concat_tables(read)).equals(
        in_change_order(native_bronze.select(columns)))
    assert _core.native_checkpoint_offset(str(native / "checkpoints/dbo_items")) == end


def test_starting_lsn_and_targets(items):
    feed = _core.Feed(options_for(items))
    first = json.loads(feed.initial_offset())
    assert first["commit_ts"] == ""  # before the first commit: no time known
    latest = _core.Feed(options_for(items, startingLsn="latest")).initial_offset()
    assert latest == feed.max_offset()
    end = feed.latest_offset(feed.initial_offset(), 3)
    given = _core.Feed(options_for(items, startingLsn=json.loads(end)["lsn"]))
    assert given.initial_offset() == end
    # availableNow: a target offset bounds the batch; nothing past the max LSN.
    assert feed.latest_offset(feed.initial_offset(), None, end) == end
    assert feed.latest_offset(feed.max_offset()) == feed.max_offset()
    assert feed.partitions(end, end) == []


def test_options_and_names_fail_as_natively(items):
    with pytest.raises(mssql_cdc.NotFoundError, match="dbo_items"):
        _core.Feed(options_for(items, captureInstance="dbo_nope"))
    with pytest.raises(mssql_cdc.ConfigError, match="maxCommitsPerBatch"):
        _core.Feed(options_for(items, maxCommitsPerBatch="zero"))
    with pytest.raises(mssql_cdc.ConfigError, match="captureInstance"):
        _core.Feed({"backend": "sim", "simPath": str(items)})
    with pytest.raises(mssql_cdc.ConfigError, match="No capture instance of dbo.items captures column 'nope'"):
        _core.read_range(options_for(items, columns="id INT, nope STRING"), "0x0", "0x1")
    with pytest.raises(mssql_cdc.ConfigError, match="option 'columns': column 'id' has no type"):
        _core.Feed(options_for(items, columns="id"))
    named_in_another_case = _core.Feed(options_for(items, captureInstance="DBO_Items"))
    assert named_in_another_case.capture_instance == "dbo_items"
    with pytest.raises(mssql_cdc.ConfigError):
        _core.Feed(options_for(items)).latest_offset("not an offset")


@pytest.fixture
def purged(cli, items):
    """`items` read up to its third commit, then two hours of commits and a cleanup with 30
    minutes' retention: the changes after that position are gone."""
    start = _core.Feed(options_for(items)).latest_offset(
        _core.Feed(options_for(items)).initial_offset(), 3)
    for i in range(12):
        cli("sim", "clock", "--db", items, "--advance", 600)
        cli("sim", "dml", "--db", items, "--json", json.dumps([insert({"id": 1000 + i})]))
    assert "deleted 0 change row" not in cli("sim", "cleanup", "--db", items,
                                             "--retention-minutes", 30).stdout
    return items, start


def test_purged_changes_fail_the_batch_or_are_skipped(cli, purged):
    db, start = purged
    feed = _core.Feed(options_for(db))
    with pytest.raises(mssql_cdc.DataLossError, match="failOnDataLoss=false") as failure:
        feed.latest_offset(start)
    assert "this batch" in str(failure.value) and json.loads(start)["lsn"] in str(failure.value)
    with pytest.raises(mssql_cdc.DataLossError):
        feed.partitions(start, feed.max_offset())
    lowest = min_lsn(db)
    assert feed.skipped_range(start) == (_core.lsn_increment(json.loads(start)["lsn"]), lowest)
    assert feed.skipped_range(feed.max_offset()) is None

    options = options_for(db, failOnDataLoss="false")
    going_on = _core.Feed(options)
    end = going_on.latest_offset(start)
    assert end == going_on.max_offset()
    ranges = going_on.partitions(start, end)
    assert ranges[0][0] == lowest
    rows = sum(b.num_rows for b in read_all(options, ranges))
    assert rows == sim_info(cli, db)["capture_instances"][0]["change_rows"]

    (skipped,) = going_on.skipped_facts(APP, "bronze", 7, start, end).to_pylist()
    assert skipped["event"] == "data_skipped" and skipped["batch_id"] == 7
    assert skipped["min_lsn"] == skipped["max_lsn"] == lowest
    assert json.loads(skipped["detail"]) == {"from": json.loads(start)["lsn"], "to": lowest,
                                             "certain": True}
    assert skipped["lost_from_ts"] == datetime.fromisoformat(json.loads(start)["commit_ts"])
    assert skipped["lost_to_ts"] is not None and skipped["end_lsn"] == json.loads(end)["lsn"]
    assert going_on.skipped_facts(APP, "bronze", 8, end, end) is None


@pytest.mark.parametrize("through_pyarrow", [False, True])
def test_cleanup_during_a_range_read_fails_its_end(cli, items, through_pyarrow):
    for i in range(12):
        cli("sim", "clock", "--db", items, "--advance", 600)
        cli("sim", "dml", "--db", items, "--json", json.dumps([insert({"id": 1000 + i})]))
    options = options_for(items, arrowBatchSize=2)
    feed = _core.Feed(options)
    ((frm, to, _),) = feed.partitions(feed.initial_offset(), feed.max_offset())
    stream = _core.read_range(options, frm, to)
    batches = pa.RecordBatchReader.from_stream(stream) if through_pyarrow else iter(stream)
    assert next(batches).num_rows == 2
    cli("sim", "cleanup", "--db", items, "--retention-minutes", 30)
    if through_pyarrow:  # the C stream interface carries the class name in the message only
        with pytest.raises(OSError, match="DataLossError"):
            list(batches)
    else:
        with pytest.raises(mssql_cdc.DataLossError, match="while this batch read them"):
            list(batches)


def test_bootstrap_is_taken_once_and_hands_over_its_offset(cli, items, tmp_path):
    options = options_for(items)
    target, state, facts = (str(tmp_path / name) for name in ("bronze", "state", "facts"))
    offset = _core.bootstrap(options, target, APP, state, facts)
    assert json.loads(offset)["lsn"] == json.loads(_core.Feed(options).max_offset())["lsn"]
    rows = delta_table(target)
    table_rows = next(t for t in sim_info(cli, items)["tables"] if t["name"] == "dbo.items")["rows"]
    assert rows.num_rows == table_rows
    assert set(rows.column("_operation").to_pylist()) == {0}
    assert set(rows.column("_snapshot").to_pylist()) == {json.loads(offset)["lsn"]}
    version = _core.delta_snapshot(target)["version"]

    dml(cli, items, insert({"id": 500}))
    assert _core.bootstrap(options, target, APP, state, facts) == offset
    assert _core.delta_snapshot(target)["version"] == version
    # snapshot_open before the read, bootstrap after the commit; nothing again on the rerun.
    assert sorted(r["event"] for r in delta_table(facts).to_pylist()) == ["bootstrap", "snapshot_open"]
    assert _core.native_checkpoint_offset(state) == offset
    with pytest.raises(mssql_cdc.ConfigError, match="startingLsn"):
        _core.bootstrap(options_for(items, startingLsn="latest"), target, APP, state, facts)
    with pytest.raises(mssql_cdc.ConfigError, match="app_id"):
        _core.bootstrap(options, target, "other", state, facts)
    with pytest.raises(mssql_cdc.NotFoundError):
        _core.native_checkpoint_offset(str(tmp_path / "nowhere"))


def test_tables_are_created_as_the_native_stream_creates_them(items, tmp_path):
    schema_json = _core.Feed(options_for(items)).spark_schema_json()
    bronze = str(tmp_path / "bronze")
    _core.ensure_bronze(bronze, schema_json, "dbo_items")
    _core.ensure_bronze(bronze, schema_json)  # exists: left as it is
    snapshot = _core.delta_snapshot(bronze)
    assert snapshot["version"] == 0
    assert snapshot["properties"]["mssql_cdc.schema_version"] == "2"
    assert "capture instance dbo_items" in snapshot["description"]
    bronze_json = _core.bronze_schema_json(schema_json)
    assert json.loads(snapshot["schema_string"]) == json.loads(bronze_json)

    facts, control = str(tmp_path / "facts"), str(tmp_path / "control")
    _core.ensure_facts(facts)
    _core.ensure_control(control)
    assert json.loads(_core.delta_snapshot(facts)["schema_string"]) == json.loads(
        _core.facts_schema_json())
    assert json.loads(_core.delta_snapshot(control)["schema_string"]) == json.loads(
        _core.control_schema_json())
    with pytest.raises(mssql_cdc.ConfigError, match="not a control table"):
        _core.ensure_control(facts)


def test_facts_rows_of_batches_and_events():
    start = '{"lsn": "0x00000010000000200001", "commit_ts": "2026-01-01T00:00:00.000"}'
    end = '{"lsn": "0x00000010000000300001", "commit_ts": "2026-01-01T00:05:00.000"}'
    empty, metadata, _ = _core.batch_facts(APP, 3, "lake/b", {"rows": 0, "min_lsn": None}, start,
                                        end, 0, 5)
    (row,) = empty.to_pylist()
    assert row["rows"] == 0 and row["deletes"] == row["inserts"] == row["updates"] == 0
    assert row["min_lsn"] is None and row["end_lsn"] == "0x00000010000000300001"
    assert row["end_commit_ts"] == datetime(2026, 1, 1, 0, 5)
    assert json.loads(metadata) == {"rows": 0, "min_lsn": None, "max_lsn": None,
                                    "min_commit_ts": None, "max_commit_ts": None, "deletes": 0,
                                    "inserts": 0, "updates": 0, "batch_id": 3, "app_id": APP,
                                    "start_lsn": "0x00000010000000200001",
                                    "end_lsn": "0x00000010000000300001"}
    stats = {"rows": 4, "deletes": 1, "inserts": 2, "updates": 1,
             "min_lsn": "0x00000010000000200002", "max_lsn": "0x00000010000000300001",
             "min_commit_ts_us": 1_767_225_660_000_000, "max_commit_ts_us": 1_767_225_900_000_000}
    _, metadata, _ = _core.batch_facts(APP, 4, "lake/b", stats, start, end, 0, 5)
    assert json.loads(metadata)["min_commit_ts"] == "2026-01-01T00:01:00.000"
    assert json.loads(metadata)["max_lsn"] == "0x00000010000000300001"
    with pytest.raises(mssql_cdc.ConfigError, match="rowz"):
        _core.batch_facts(APP, 4, "lake/b", {"rows": 1, "rowz": 1}, start, end, 0, 5)
    with pytest.raises(mssql_cdc.ConfigError):
        _core.batch_facts(APP, 4, "lake/b", {"rows": 1, "min_lsn": "nope"}, start, end, 0, 5)

    event = _core.event_facts(APP, "lake/b", "data_skipped", {"to": "b", "from": "a", "n": "é"},
                              batch_id=9, min_lsn="0x00000000000000000010", end=end,
                              lost_to_ts_us=0)
    (row,) = event.to_pylist()
    assert row["event"] == "data_skipped" and row["batch_id"] == 9
    assert row["detail"] == '{"from":"a","n":"é","to":"b"}'
    assert row["min_lsn"] == "0x00000000000000000010" and row["max_lsn"] is None
    assert row["lost_to_ts"] == datetime(1970, 1, 1) and row["end_commit_ts"] is not None
    assert event.schema == spark_arrow(_core.facts_schema_json())
    (note,) = _core.event_facts(APP, "t", "note", "plain text").to_pylist()
    assert note["detail"] == "plain text"


def test_finalization_verdicts(tmp_path):
    control = str(tmp_path / "control")
    end = '{"lsn": "0x00000010000000300001", "commit_ts": "2026-01-01T05:42:10.500"}'
    assert _core.finalization_candidate(end, "hour") == "2026-01-01T05:00:00.000"
    assert _core.finalization_candidate(end, "day") == "2026-01-01T00:00:00.000"
    assert _core.finalization_candidate(
        '{"lsn": "0x00000010000000300001", "commit_ts": ""}', "hour") is None
    assert _core.finalized_until(control, "t") is None
    assert _core.finalization_advance(control, "t", end, "minute") == "2026-01-01T05:42:00.000"
    assert _core.finalization_advance(control, "t", end, "hour") is None  # never backwards
    assert _core.finalized_until(control, "t") == "2026-01-01T05:42:00.000"
    assert _core.is_final(control, "t", "2026-01-01T05:42:00.000")
    assert not _core.is_final(control, "t", "2026-01-01T05:43:00.000")
    assert not _core.is_final(control, "other", "2000-01-01")
    with pytest.raises(mssql_cdc.ConfigError, match="granularity"):
        _core.finalization_advance(control, "t", end, "week")
    with pytest.raises(mssql_cdc.ConfigError, match="period_end"):
        _core.is_final(control, "t", "soon")


def test_expand_template():
    assert _core.expand_template("lake/{ci}/x_{ci}", "dbo_a", "target") == "lake/dbo_a/x_dbo_a"
    with pytest.raises(mssql_cdc.ConfigError, match=r"^app_id='fixed' must contain '\{ci\}'"):
        _core.expand_template("fixed", "dbo_a", "app_id")
