"""Table arguments on Spark: a table name goes through the session's catalog, a path through
the engine.

The engine's rule tells them apart (``_core.table_name``, core/table_ref.h): text with '/' or
':' is a path or URI, anything else a name of one to three parts, and text that is neither is
refused. A named table is created, migrated, written and read with the session's SQL and
DataFrame API, so whatever catalog the session has (a Hive metastore, Unity Catalog) decides
where it lives; its columns, comments and properties come from the engine's definitions, so it
is the table the native engine writes at a path. A path is created by the engine, as before.

Relative paths are refused: Spark reads them against its default filesystem and this package
against the working directory, which are different places on most platforms.
"""

from __future__ import annotations

import logging
from typing import Any

from pyspark.sql import DataFrame

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError

log = logging.getLogger("mssql_cdc")

_KINDS = ("bronze", "facts", "control", "plans")


def check_location(text: str, what: str) -> None:
    """Refuses a location that Spark and the engine would read as two places (a relative path)."""
    _core.check_location(text, what)


class TableArg:
    """One table argument as the engine's rule reads it: ``name`` (quoted for SQL) or ``path``."""

    def __init__(self, text: str, what: str) -> None:
        if not isinstance(text, str):
            raise ConfigError(f"{what} must be a table name or a path, not {text!r}")
        parsed = _core.table_name(text, what)
        self.text = text
        self.what = what
        self.name: str | None = parsed[0] if parsed else None
        self.schema: str = parsed[1] if parsed else ""
        if self.name is None:
            check_location(text, what)

    @property
    def is_name(self) -> bool:
        return self.name is not None

    def __str__(self) -> str:
        return self.text


def _describe(spark: Any, name: str) -> dict[str, str]:
    """DESCRIBE TABLE EXTENDED as {col_name: data_type} of its detailed rows."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    return {str(r["col_name"]).strip(): str(r["data_type"]).strip() for r in rows if r["col_name"]}


def check(spark: Any, table: TableArg, kind: str) -> bool:
    """Checks a named table before anything is written; returns whether it exists.

    Its schema must exist; an existing table must be a Delta table (not a view) of `kind`.
    A path is checked by the engine when it is ensured.
    """
    return _inspect(spark, table) is not None


def _inspect(spark: Any, table: TableArg) -> dict[str, str] | None:
    """DESCRIBE TABLE EXTENDED of an existing named Delta table, None when it does not exist
    (ConfigError when its schema is missing, or it is a view or not Delta)."""
    if not table.is_name:
        return {} if _core.delta_exists(table.text) else None
    if not spark.catalog.tableExists(table.name):
        if table.schema and not spark.catalog.databaseExists(table.schema):
            raise ConfigError(
                f"{table.what}={table.text!r}: schema {table.schema} does not exist; create it first "
                f"with CREATE SCHEMA IF NOT EXISTS {table.schema}")
        return None
    detail = _describe(spark, table.name)
    if detail.get("Type", "").upper() == "VIEW":
        raise ConfigError(f"{table.what}={table.text!r} is a view; name a Delta table, or a table "
                          f"that does not exist yet")
    provider = detail.get("Provider", "").lower()
    if provider != "delta":
        raise ConfigError(f"{table.what}={table.text!r} is a {provider or 'non-Delta'} table; name a "
                          f"Delta table, or a table that does not exist yet")
    return detail


def _properties(spark: Any, name: str) -> dict[str, str]:
    """The table's properties (mssql_cdc.schema_version, delta.columnMapping.mode, ...)."""
    return {str(r["key"]): str(r["value"]) for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}


def prepare(spark: Any, table: TableArg, kind: str, *, output_schema_json: str | None = None,
            capture_instance: str | None = None) -> list[str]:
    """What ``ensure`` will run for a named table, checked now: the statements, [] for a path.

    Raises ConfigError when the table cannot become a `kind` table, so that a run with a bad
    table fails before anything is written.
    """
    assert kind in _KINDS
    detail = _inspect(spark, table)
    if not table.is_name:
        if detail is not None and kind == "bronze" and output_schema_json is not None:
            _core.check_bronze(table.text, output_schema_json)
        return []
    if detail is None:
        return [_core.create_table_sql(kind, table.text, output_schema_json, capture_instance)]
    existing = spark.table(table.name).schema.json()
    return list(_core.migrate_table_sql(kind, table.text, existing, _properties(spark, table.name),
                                        output_schema_json))


def ensure(spark: Any, table: TableArg, kind: str, *, output_schema_json: str | None = None,
           capture_instance: str | None = None, statements: list[str] | None = None) -> None:
    """Creates the table when missing, or brings it up to date, as the native engine would."""
    if not table.is_name:
        if kind == "bronze":
            _core.ensure_bronze(table.text, output_schema_json, capture_instance)
        elif kind == "facts":
            _core.ensure_facts(table.text)
        elif kind == "plans":
            _core.ensure_plans(table.text)
        else:
            _core.ensure_control(table.text)
        return
    if statements is None:
        statements = prepare(spark, table, kind, output_schema_json=output_schema_json,
                             capture_instance=capture_instance)
    for statement in statements:
        log.info("mssql_cdc: %s", statement.split(" (", 1)[0])
        spark.sql(statement)


def sql_ref(table: TableArg) -> str:
    """How Spark SQL names the table: its name, or delta.`path` for a path."""
    return table.name if table.is_name else f"delta.`{table.text.replace('`', '``')}`"


def read(spark: Any, table: TableArg) -> DataFrame:
    """The table's rows through Spark."""
    if table.is_name:
        return spark.table(table.name)
    return spark.read.format("delta").load(table.text)


def append(df: DataFrame, table: TableArg, *, txn_app_id: str | None = None,
           txn_version: int | None = None, user_metadata: str | None = None,
           merge_schema: bool = False) -> None:
    """Appends `df`; with a txn, once per (txn_app_id, txn_version): Delta skips a txn it
    already holds."""
    writer = df.write.format("delta").mode("append")
    if txn_app_id is not None:
        writer = writer.option("txnAppId", txn_app_id).option("txnVersion", txn_version)
    if merge_schema:
        writer = writer.option("mergeSchema", "true")
    if user_metadata is not None:
        writer = writer.option("userMetadata", user_metadata)
    if table.is_name:
        writer.saveAsTable(table.name)
    else:
        writer.save(table.text)
