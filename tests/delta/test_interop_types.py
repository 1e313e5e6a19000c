"""Every column type the engine writes, with NULLs, comments, properties, a txn and user
metadata, read back by delta-rs and by Spark with delta-spark, and by the engine itself."""

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from delta_interop import deltars_rows, engine_rows, spark_comments, spark_properties, spark_rows

UTC = dt.timezone.utc

COMMENTS = {
    "id": "the key",
    "flag": "a bit column",
    "i16": "smallint",
    "amount": "money-like decimal(18,2)",
    "label": "nvarchar with unicode: é ☃",
}

SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False, metadata={"comment": COMMENTS["id"]}),
    pa.field("flag", pa.bool_(), metadata={"comment": COMMENTS["flag"]}),
    pa.field("i8", pa.int8()),
    pa.field("i16", pa.int16(), metadata={"comment": COMMENTS["i16"]}),
    pa.field("i32", pa.int32()),
    pa.field("i64", pa.int64()),
    pa.field("f32", pa.float32()),
    pa.field("f64", pa.float64()),
    pa.field("big", pa.decimal128(38, 10)),
    pa.field("amount", pa.decimal128(18, 2), metadata={"comment": COMMENTS["amount"]}),
    pa.field("day", pa.date32()),
    pa.field("ts", pa.timestamp("us", tz="UTC")),
    pa.field("ts_ntz", pa.timestamp("us")),
    pa.field("label", pa.string(), metadata={"comment": COMMENTS["label"]}),
    pa.field("payload", pa.binary()),
])

# Delta type names as the log must name them, and Spark's simpleString of each.
DELTA_TYPES = {
    "id": "long", "flag": "boolean", "i8": "byte", "i16": "short", "i32": "integer", "i64": "long",
    "f32": "float", "f64": "double", "big": "decimal(38,10)", "amount": "decimal(18,2)",
    "day": "date", "ts": "timestamp", "ts_ntz": "timestamp_ntz", "label": "string",
    "payload": "binary",
}
SPARK_TYPES = {
    "id": "bigint", "flag": "boolean", "i8": "tinyint", "i16": "smallint", "i32": "int",
    "i64": "bigint", "f32": "float", "f64": "double", "big": "decimal(38,10)",
    "amount": "decimal(18,2)", "day": "date", "ts": "timestamp", "ts_ntz": "timestamp_ntz",
    "label": "string", "payload": "binary",
}

PROPERTIES = {"mssql_cdc.schema_version": "3", "mssql_cdc.kind": "bronze", "delta.appendOnly": "false"}


def rows_first():
    return [
        dict(id=1, flag=True, i8=-128, i16=-32768, i32=-2147483648, i64=-9223372036854775808,
             f32=1.5, f64=-1.5e-300, big=Decimal("1234567890123456789012345678.0123456789"),
             amount=Decimal("9999999999999999.99"), day=dt.date(1, 1, 1),
             ts=dt.datetime(1753, 1, 1, 0, 0, 0, tzinfo=UTC),
             ts_ntz=dt.datetime(1, 1, 1, 0, 0, 0), label="héllo ☃", payload=b"\x00\xff\x10"),
        dict(id=2, flag=False, i8=127, i16=32767, i32=2147483647, i64=9223372036854775807,
             f32=-2.25, f64=1e308, big=Decimal("-0.0000000001"), amount=Decimal("-0.01"),
             day=dt.date(9999, 12, 31), ts=dt.datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=UTC),
             ts_ntz=dt.datetime(9999, 12, 31, 23, 59, 59, 999999), label="", payload=b""),
        dict(id=3, flag=None, i8=None, i16=None, i32=None, i64=None, f32=None, f64=None, big=None,
             amount=None, day=None, ts=None, ts_ntz=None, label=None, payload=None),
        dict(id=4, flag=True, i8=0, i16=0, i32=0, i64=0, f32=0.0, f64=0.0, big=Decimal("0E-10"),
             amount=Decimal("0.00"), day=dt.date(2026, 11, 1),
             ts=dt.datetime(2026, 11, 1, 8, 59, 59, tzinfo=UTC),
             ts_ntz=dt.datetime(2026, 11, 1, 1, 59, 59), label="x" * 5000, payload=b"y" * 3000),
    ]


def rows_second():
    return [
        dict(id=10 + i, flag=i % 2 == 0, i8=i % 100 - 50, i16=i * 100, i32=i * 100000, i64=i * 10**12,
             f32=float(i) / 4, f64=i / 3, big=(Decimal(i) / Decimal(7)).quantize(Decimal("1E-10")), amount=Decimal(i * 101) / 100,
             day=dt.date(2000, 1, 1) + dt.timedelta(days=i),
             ts=dt.datetime(2026, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=i * 3601, microseconds=i),
             ts_ntz=dt.datetime(2026, 1, 1) + dt.timedelta(minutes=i),
             label=None if i % 5 == 0 else f"row {i}", payload=bytes([i % 256]) * (i % 7))
        for i in range(200)
    ]


def normalised(rows):
    """Values as the table holds them: float32 rounded (decimals compare by value)."""
    out = []
    for r in rows:
        r = dict(r)
        if r["f32"] is not None:
            r["f32"] = pa.scalar(r["f32"], pa.float32()).as_py()
        out.append(r)
    return sorted(out, key=lambda r: r["id"])


@pytest.fixture(scope="module")
def typed_table(core, tmp_path_factory):
    path = tmp_path_factory.mktemp("types") / "bronze_all_types"
    v0 = core.delta_create(str(path), SCHEMA, properties=PROPERTIES, name="all_types",
                           description="every column type the engine writes")
    assert v0 == 0
    first = pa.Table.from_pylist(rows_first(), schema=SCHEMA)
    r1 = core.delta_append(str(path), first, app_id="types-app", version=7,
                           user_metadata=json.dumps({"batch_id": 7, "lsn": "0x00000021000000400003"}))
    assert r1["written"] and r1["version"] == 1 and r1["rows"] == 4 and r1["files"] >= 1
    # A second append, from a RecordBatchReader of several batches, zstd-compressed.
    second = pa.Table.from_pylist(rows_second(), schema=SCHEMA)
    reader = pa.RecordBatchReader.from_batches(SCHEMA, second.to_batches(max_chunksize=64))
    r2 = core.delta_append(str(path), reader, app_id="types-app", version=8, compression="zstd")
    assert r2["written"] and r2["version"] == 2 and r2["rows"] == 200
    return path, normalised(rows_first() + rows_second())


def test_delta_rs_reads_rows_schema_properties_and_txn(typed_table):
    path, expected = typed_table
    assert deltars_rows(path, "id") == expected

    table = DeltaTable(str(path))
    assert table.version() == 2
    fields = {f.name: f for f in table.schema().fields}
    assert list(fields) == list(DELTA_TYPES)
    assert {n: f.type.type for n, f in fields.items()} == DELTA_TYPES
    assert not fields["id"].nullable and all(f.nullable for n, f in fields.items() if n != "id")
    assert {n: f.metadata.get("comment") for n, f in fields.items() if "comment" in f.metadata} == COMMENTS

    meta = table.metadata()
    assert {k: meta.configuration.get(k) for k in PROPERTIES} == PROPERTIES
    assert meta.name == "all_types"
    assert meta.description == "every column type the engine writes"
    assert table.transaction_version("types-app") == 8
    assert table.transaction_version("another-app") is None

    # timestamp_ntz needs table features: the protocol names it for readers and writers.
    protocol = table.protocol()
    assert (protocol.min_reader_version, protocol.min_writer_version) == (3, 7)
    assert "timestampNtz" in protocol.reader_features and "timestampNtz" in protocol.writer_features

    history = {h["version"]: h for h in table.history()}
    assert json.loads(history[1]["userMetadata"]) == {"batch_id": 7, "lsn": "0x00000021000000400003"}
    assert history[1]["operation"] == "WRITE"


def test_delta_rs_sees_file_statistics_that_match_the_data(typed_table):
    path, expected = typed_table
    adds = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True)).to_pylist()
    assert sum(a["num_records"] for a in adds) == len(expected)
    assert min(a["min.id"] for a in adds) == 1
    assert max(a["max.id"] for a in adds) == 209
    assert sum(a["null_count.label"] for a in adds) == sum(r["label"] is None for r in expected)
    assert min(a["min.i32"] for a in adds) == -2147483648
    assert min(a["min.day"] for a in adds) == dt.date(1, 1, 1)


def test_spark_reads_rows_schema_properties_and_comments(spark, typed_table):
    path, expected = typed_table
    assert spark_rows(spark, path, "id") == expected

    df = spark.read.format("delta").load(str(path))
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields} == SPARK_TYPES
    assert [f.name for f in df.schema.fields] == list(SPARK_TYPES)

    props = spark_properties(spark, path)
    assert {k: props.get(k) for k in PROPERTIES} == PROPERTIES
    assert props["delta.minReaderVersion"] == "3" and props["delta.minWriterVersion"] == "7"
    comments = spark_comments(spark, path)
    assert {k: v for k, v in comments.items() if v} == COMMENTS

    detail = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]
    assert detail["description"] == "every column type the engine writes"
    assert "timestampNtz" in detail["tableFeatures"]

    history = {r["version"]: r for r in spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()}
    assert sorted(history) == [0, 1, 2]
    assert json.loads(history[1]["userMetadata"]) == {"batch_id": 7, "lsn": "0x00000021000000400003"}

    # Filters that Spark pushes down to the files' statistics still find the right rows.
    got = df.where("i32 >= 0 AND ts < '2026-01-03'").select("id").toArrow().column("id").to_pylist()
    want = [r["id"] for r in expected if r["i32"] is not None and r["i32"] >= 0
            and r["ts"] < dt.datetime(2026, 1, 3, tzinfo=UTC)]
    assert sorted(got) == sorted(want)


def test_engine_reads_its_table_and_filters(core, typed_table):
    path, expected = typed_table
    assert engine_rows(core, path, "id") == expected
    got = engine_rows(core, path, "id", [("i32", ">=", 0), ("ts", "<", dt.datetime(2026, 1, 3, tzinfo=UTC))])
    assert [r["id"] for r in got] == [
        r["id"] for r in expected
        if r["i32"] is not None and r["i32"] >= 0 and r["ts"] < dt.datetime(2026, 1, 3, tzinfo=UTC)
    ]
    assert engine_rows(core, path, "id", [("label", "=", "row 3")]) == [r for r in expected if r["label"] == "row 3"]
    assert engine_rows(core, path, "id", [("flag", "=", False), ("id", "<", 3)]) == [expected[1]]

    snap = core.delta_snapshot(str(path))
    assert snap["version"] == 2
    assert snap["app_versions"] == {"types-app": 8}
    assert {k: snap["properties"].get(k) for k in PROPERTIES} == PROPERTIES
    assert (snap["min_reader_version"], snap["min_writer_version"]) == (3, 7)
    schema = json.loads(snap["schema_string"])
    assert [(f["name"], f["type"]) for f in schema["fields"]] == list(DELTA_TYPES.items())


def test_create_again_same_schema_is_a_no_op_another_schema_fails(core, typed_table):
    import mssql_cdc

    path, expected = typed_table
    before = sorted(p.name for p in (path / "_delta_log").iterdir())
    assert core.delta_create(str(path), SCHEMA, properties=PROPERTIES) == 2
    other = SCHEMA.set(4, pa.field("i32", pa.string()))
    with pytest.raises(mssql_cdc.SchemaChangedError, match="i32"):
        core.delta_create(str(path), other)
    assert sorted(p.name for p in (path / "_delta_log").iterdir()) == before
    assert engine_rows(core, path, "id") == expected


def test_plain_table_keeps_the_lowest_protocol_and_file_uri_works(core, spark, tmp_path):
    path = tmp_path / "plain"
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("v", pa.float64())])
    core.delta_create(f"file://{path}", schema)
    core.delta_append(f"file://{path}", pa.table({"k": ["a", "b"], "v": [1.0, None]}, schema=schema))
    protocol = DeltaTable(str(path)).protocol()
    assert (protocol.min_reader_version, protocol.min_writer_version) == (1, 2)
    assert deltars_rows(path, "k") == [{"k": "a", "v": 1.0}, {"k": "b", "v": None}]
    assert spark_rows(spark, path, "k") == [{"k": "a", "v": 1.0}, {"k": "b", "v": None}]
