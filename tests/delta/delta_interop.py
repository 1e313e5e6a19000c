"""Helpers of the Delta interop tests: a table read back by delta-rs, by Spark, by the engine,
and its log parsed independently of the engine."""

import json
from pathlib import Path

import pyarrow as pa


def sort_rows(rows, key):
    return sorted(rows, key=lambda r: (r[key] is None, r[key]))


def deltars_rows(path, key):
    from deltalake import DeltaTable

    return sort_rows(DeltaTable(str(path)).to_pyarrow_table().to_pylist(), key)


def deltars_query_rows(path, key):
    """The rows as delta-rs's query engine reads them: it applies column mapping, which its
    to_pyarrow_table() (1.6) does not (a reader-version-2 table, even one Spark mapped, reads
    as NULLs there; a table-features one is refused)."""
    from deltalake import DeltaTable, QueryBuilder

    table = QueryBuilder().register("t", DeltaTable(str(path))).execute("SELECT * FROM t").read_all()
    return sort_rows(pa.table(table).to_pylist(), key)


def spark_table(spark, path):
    """The table as Spark reads it, as a pyarrow Table."""
    return spark.read.format("delta").load(str(path)).toArrow()


def spark_rows(spark, path, key):
    return sort_rows(spark_table(spark, path).to_pylist(), key)


def engine_rows(core, path, key, filter=None):
    return sort_rows(pa.table(core.delta_read(str(path), filter)).to_pylist(), key)


def spark_properties(spark, path):
    rows = spark.sql(f"SHOW TBLPROPERTIES delta.`{path}`").collect()
    return {r["key"]: r["value"] for r in rows}


def spark_comments(spark, path):
    """Column name -> comment from DESCRIBE TABLE."""
    out = {}
    for r in spark.sql(f"DESCRIBE TABLE delta.`{path}`").collect():
        name = r["col_name"]
        if not name or name.startswith("#"):
            break
        out[name] = r["comment"]
    return out


def log_commits(path):
    """Every commit file of the table, parsed independently of the engine: version -> actions."""
    commits = {}
    for f in sorted((Path(path) / "_delta_log").glob("*.json")):
        if f.stem.isdigit() and len(f.stem) == 20:
            commits[int(f.stem)] = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    return commits


def log_txn_versions(path, app_id):
    """(txn version -> commit version) for every txn of app_id in the commit files."""
    out = {}
    for version, actions in log_commits(path).items():
        for a in actions:
            if "txn" in a and a["txn"]["appId"] == app_id:
                out[a["txn"]["version"]] = version
    return out
