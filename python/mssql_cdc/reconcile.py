"""``reconcile`` on Spark: compares a silver table with its SQL Server table.

The run is the engine's (``reconcile/`` in C++, docs/reconcile.md): it reads the source
through the stream's options, cuts the key space into buckets, classifies them and compares
rows. Spark answers what it asks of silver and bronze with the SQL the engine writes
(``catalog/reconcile_sql.h``), at the versions read first. This module reads those versions
and silver's position, and writes the report table when one is named.

Tables are names (through the session's catalog) or absolute paths, as everywhere
(``mssql_cdc.tables``). Nothing is ever written to SQL Server. As in the reference library,
the package's attribute ``mssql_cdc.reconcile`` is this module's function, and the module is
``importlib.import_module("mssql_cdc.reconcile")``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql.types import StructType

from mssql_cdc import _core, backfill, migrations, tables
from mssql_cdc.errors import ConfigError
from mssql_cdc.finalization import position_of
from mssql_cdc.tables import delta_table, table_ref  # noqa: F401 (exported here too, as in the reference)
from mssql_cdc.types import ReconcileResult, SourceOptions, SparkSessionLike


def _schema_json(spark: Any, table_sql: str, version: int) -> str:
    return spark.sql(f"SELECT * FROM {table_sql} VERSION AS OF {version}").schema.json()


# The report table as the engine defines it: columns as (name, Spark SQL type, comment), and
# its comment.
REPORT_COLUMNS, REPORT_COMMENT = _core.table_definition("reconcile")


def reconcile(
    spark: SparkSessionLike,
    options: SourceOptions | Mapping[str, Any],
    silver: str,
    *,
    keys: Sequence[str] | None = None,
    bronze: str,
    control_table: str,
    facts_table: str | None = None,
    bucket_rows: int = 1_000_000,
    sample: float = 0.01,
    report_table: str | None = None,
    seed: int | None = None,
) -> ReconcileResult:
    """Compares silver with the source table of ``options``' capture instance: bucket counts
    and key sums first, then the rows of every bucket that differs and of a ``sample`` of
    the others. Appends the report rows to ``report_table`` when given."""
    if isinstance(bucket_rows, bool) or not isinstance(bucket_rows, int):
        raise ConfigError(f"bucket_rows must be an int, not {bucket_rows!r}")
    if isinstance(sample, bool) or not isinstance(sample, (int, float)):
        raise ConfigError(f"sample must be a number in [0, 1], not {sample!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ConfigError(f"seed must be a non-negative int, not {seed!r}")
    _core.check_reconcile_options(bucket_rows, float(sample))
    if not isinstance(options, Mapping):
        raise ConfigError("options must be the stream's options (a dict of str to str)")
    if isinstance(keys, str):
        keys = [keys]
    silver_arg = tables.TableArg(silver, "silver")
    bronze_arg = tables.TableArg(bronze, "bronze")
    control = tables.TableArg(control_table, "control_table")
    report = tables.TableArg(report_table, "report_table") if report_table is not None else None
    facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None
    facts_exist = facts is not None and tables.check(spark, facts, "facts")
    if not tables.check(spark, silver_arg, "silver"):
        raise ConfigError(f"silver={silver!r} does not exist yet: run apply_changes first")
    if not tables.check(spark, bronze_arg, "bronze"):
        raise ConfigError(f"bronze={bronze!r} does not exist")
    tables.check(spark, control, "control")
    silver_sql, bronze_sql = tables.sql_ref(silver_arg), tables.sql_ref(bronze_arg)
    report_exists = report is not None and tables.check(spark, report, "reconcile report")
    if report_exists:
        _core.check_report_columns(list(tables.read(spark, report).columns), report_table)
        _core.check_schema_version(tables.properties_of(spark, tables.sql_ref(report)), "reconcile",
                                   f"table {report_table}")

    # Silver's position before its version: silver holds at least what the position says.
    position = position_of(spark, control, silver)
    silver_version = tables.sql_version(spark, silver_sql)
    bronze_version = tables.sql_version(spark, bronze_sql)
    state = {
        "silver_name": silver, "silver_sql": silver_sql, "silver_version": silver_version,
        "silver_schema": _schema_json(spark, silver_sql, silver_version),
        "silver_properties": {str(r["key"]): str(r["value"])
                              for r in spark.sql(f"SHOW TBLPROPERTIES {silver_sql}").collect()},
        "position": position,
        "bronze_name": bronze, "bronze_sql": bronze_sql, "bronze_version": bronze_version,
        "bronze_schema": _schema_json(spark, bronze_sql, bronze_version),
        "bronze_id": str(spark.sql(f"DESCRIBE DETAIL {bronze_sql}").collect()[0]["id"]),
        # With a facts table the chunk checks run (on one not written yet they find nothing).
        "has_facts": facts is not None,
        "facts_sql": tables.sql_ref(facts) if facts_exist else None,
    }
    plans = backfill.plans_table(bronze_arg)
    if facts is not None and tables.check(spark, plans, "plans"):
        state["plans_sql"], state["plans_name"] = tables.sql_ref(plans), plans.text
    summary_json, rows = _core.reconcile(dict(options), list(keys) if keys else None, bucket_rows, float(sample),
                                         seed, json.dumps(state), lambda sql: spark.sql(sql).toArrow())
    summary = json.loads(summary_json)
    report_df = spark.createDataFrame(_arrow_table(rows),
                                      schema=StructType.fromJson(json.loads(_core.report_schema_json())))
    if report is not None:
        # Created as the engine defines it (columns, comments, schema version), then appended to.
        tables.create_if_not_exists(spark, report_table, REPORT_COLUMNS, REPORT_COMMENT,
                                    {migrations.SCHEMA_VERSION_PROPERTY: str(migrations.current_version("reconcile"))})
        tables.append(report_df, report)
    return ReconcileResult(run_id=summary["run_id"], silver_version=summary["silver_version"],
                           silver_lsn=summary["silver_lsn"], source_lsn=summary["source_lsn"],
                           buckets=summary["buckets"], match=summary["match"], in_flight=summary["in_flight"],
                           mismatch=summary["mismatch"], hashed=summary["hashed"],
                           failures=dict(summary["failures"]), keys_in_flight=summary["keys_in_flight"],
                           report=report_df)


def _arrow_table(batch: Any) -> Any:
    import pyarrow as pa

    return pa.Table.from_batches([batch], schema=batch.schema)
