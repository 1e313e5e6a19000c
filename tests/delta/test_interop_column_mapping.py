"""Column mapping by name, both ways between the engine and Spark with delta-spark, and read by
delta-rs (its query engine; its to_pyarrow_table() does not apply column mapping): a table the
engine creates with a column name that needs mapping, a column added to
it, Spark appending to it; and a table without mapping, refused with the ALTER TABLE that the
error gives, which Spark then runs, after which the engine adds the column."""

import json

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from delta_interop import deltars_query_rows, engine_rows, spark_properties, spark_rows

SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("Qty (kg)", pa.float64()),
    pa.field("unit=price", pa.string()),
])


def first_rows():
    return [{"id": i, "Qty (kg)": i / 2, "unit=price": f"p{i}"} for i in range(5)]


def log_actions(path, version):
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line]


@pytest.fixture(scope="module")
def mapped_table(core, tmp_path_factory):
    path = tmp_path_factory.mktemp("mapping") / "bronze_mapped"
    core.delta_create(str(path), SCHEMA)
    core.delta_append(str(path), pa.Table.from_pylist(first_rows(), schema=SCHEMA))
    # A column added later gets the next id.
    wider = SCHEMA.append(pa.field("Net weight (g)", pa.int32()))
    core.delta_append(str(path), pa.Table.from_pylist(
        [{"id": 5, "Qty (kg)": 2.5, "unit=price": "p5", "Net weight (g)": 2500}], schema=wider))
    return path


def test_the_engine_creates_a_mapped_table_spark_and_delta_rs_read(spark, mapped_table):
    path = mapped_table
    metadata = next(a["metaData"] for a in log_actions(path, 2) if "metaData" in a)
    assert metadata["configuration"]["delta.columnMapping.mode"] == "name"
    assert metadata["configuration"]["delta.columnMapping.maxColumnId"] == "4"
    fields = json.loads(metadata["schemaString"])["fields"]
    assert [f["metadata"]["delta.columnMapping.id"] for f in fields] == [1, 2, 3, 4]
    assert all(f["metadata"]["delta.columnMapping.physicalName"].startswith("col-") for f in fields)

    expected = [dict(r, **{"Net weight (g)": None}) for r in first_rows()]
    expected.append({"id": 5, "Qty (kg)": 2.5, "unit=price": "p5", "Net weight (g)": 2500})
    assert spark_rows(spark, path, "id") == expected
    assert deltars_query_rows(path, "id") == expected
    assert spark_properties(spark, path)["delta.columnMapping.mode"] == "name"
    protocol = DeltaTable(str(path)).protocol()
    assert (protocol.min_reader_version, protocol.min_writer_version) == (2, 5)


def test_spark_appends_to_the_engines_mapped_table_and_the_engine_reads_its_files(
        spark, core, mapped_table, tmp_path):
    # A copy, so that the module's table stays as the engine wrote it.
    import shutil
    path = tmp_path / "copy"
    shutil.copytree(mapped_table, path)
    frame = spark.createDataFrame([(6, 3.0, "p6", 3000)],
                                  "id BIGINT, `Qty (kg)` DOUBLE, `unit=price` STRING, `Net weight (g)` INT")
    frame.write.format("delta").mode("append").save(str(path))
    rows = engine_rows(core, path, "id")
    assert rows[-1] == {"id": 6, "Qty (kg)": 3.0, "unit=price": "p6", "Net weight (g)": 3000}
    assert len(rows) == 7
    # The engine filters on a mapped column through Spark's stats, keyed by physical names.
    assert [r["id"] for r in engine_rows(core, path, "id", [("Qty (kg)", ">=", "2.5")])] == [5, 6]


def test_a_table_without_mapping_gets_the_alter_that_enables_it(spark, core, tmp_path):
    path = tmp_path / "plain"
    plain = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("qty", pa.float64())])
    core.delta_create(str(path), plain)
    core.delta_append(str(path), pa.Table.from_pylist([{"id": 1, "qty": 0.5}], schema=plain))
    wider = plain.append(pa.field("Qty (kg)", pa.float64()))
    rows = pa.Table.from_pylist([{"id": 2, "qty": 1.0, "Qty (kg)": 1.0}], schema=wider)
    with pytest.raises(Exception) as refused:
        core.delta_append(str(path), rows)
    message = str(refused.value)
    assert type(refused.value).__name__ == "SchemaChangedError", message
    assert "'Qty (kg)'" in message
    alter = message[message.index("ALTER TABLE"):]
    assert alter == (f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.columnMapping.mode'='name', "
                     f"'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')")
    assert DeltaTable(str(path)).version() == 1  # nothing written

    # The statement the error gives, as a user runs it; then the engine adds the column.
    spark.sql(alter)
    core.delta_append(str(path), rows)
    expected = [{"id": 1, "qty": 0.5, "Qty (kg)": None}, {"id": 2, "qty": 1.0, "Qty (kg)": 1.0}]
    assert spark_rows(spark, path, "id") == expected
    assert deltars_query_rows(path, "id") == expected
    assert engine_rows(core, path, "id") == expected
    # The columns Spark mapped keep their names as physical names; the new one has its own.
    fields = json.loads(DeltaTable(str(path)).schema().to_json())["fields"]
    physical = {f["name"]: f["metadata"]["delta.columnMapping.physicalName"] for f in fields}
    assert physical["id"] == "id" and physical["qty"] == "qty"
    assert physical["Qty (kg)"].startswith("col-")
