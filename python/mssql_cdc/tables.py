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
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pyspark.sql import DataFrame

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError

log = logging.getLogger("mssql_cdc")
T = TypeVar("T")

if TYPE_CHECKING:
    from delta.tables import DeltaTable
    from pyspark.sql import Row
    from pyspark.sql.types import DataType

    from mssql_cdc.types import SparkSessionLike

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


def properties_of(spark: Any, name: str) -> dict[str, str]:
    """The table's properties (mssql_cdc.schema_version, delta.columnMapping.mode, ...)."""
    return {str(r["key"]): str(r["value"]) for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}


class TablePlan(NamedTuple):
    """What ``plan`` found: whether the table exists, and the statements ``ensure`` will run."""

    exists: bool
    statements: list[str]


def plan(spark: Any, table: TableArg, kind: str, *, output_schema_json: str | None = None,
         capture_instance: str | None = None) -> TablePlan:
    """Whether the table exists and what ``ensure`` will run for it, checked now: for a name the
    statements that create or migrate it, [] for a path.

    Raises ConfigError when the table cannot become a `kind` table, so that a run with a bad
    table fails before anything is written.
    """
    assert kind in _KINDS
    detail = _inspect(spark, table)
    if not table.is_name:
        if detail is not None and kind == "bronze" and output_schema_json is not None:
            _core.check_bronze(table.text, output_schema_json)
        elif detail is not None:
            _core.check_table(kind, table.text)
        return TablePlan(detail is not None, [])
    if detail is None:
        return TablePlan(False, [_core.create_table_sql(kind, table.text, output_schema_json, capture_instance)])
    return TablePlan(True, migration_sql(spark, table, kind, output_schema_json=output_schema_json))


def prepare(spark: Any, table: TableArg, kind: str, *, output_schema_json: str | None = None,
            capture_instance: str | None = None) -> list[str]:
    """``plan``'s statements."""
    return plan(spark, table, kind, output_schema_json=output_schema_json,
                capture_instance=capture_instance).statements


def migration_sql(spark: Any, table: TableArg, kind: str, *, output_schema_json: str | None = None,
                  properties: dict[str, str] | None = None) -> list[str]:
    """The statements that bring the existing table (a name, or a path as delta.`path`) up to its
    kind's definition, by the engine's rule; ConfigError when it is not a `kind` table or a newer
    release migrated it. `properties` are the table's, when already read."""
    if properties is None:
        properties = properties_of(spark, sql_ref(table))
    existing = read(spark, table).schema.json()
    return list(_core.migrate_table_sql(kind, table.text, existing, properties, output_schema_json))


def ensure(spark: Any, table: TableArg, kind: str, *, output_schema_json: str | None = None,
           capture_instance: str | None = None, statements: list[str] | None = None) -> None:
    """Creates the table when missing, or brings it up to date, as the native engine would;
    checked first (``prepare``) unless `statements` are the ones prepare gave."""
    if statements is None:
        statements = prepare(spark, table, kind, output_schema_json=output_schema_json,
                             capture_instance=capture_instance)
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
    for statement in statements:
        log.info("mssql_cdc: %s", statement.split(" (", 1)[0])
        spark.sql(statement)


def sql_ref(table: TableArg) -> str:
    """How Spark SQL names the table: its name, or delta.`path` for a path."""
    return table.name if table.is_name else f"delta.`{table.text.replace('`', '``')}`"


def location(spark: Any, table: TableArg) -> str:
    """Where an existing table's files are: its path, or the location the catalog gives a name."""
    if not table.is_name:
        return table.text
    # The catalog's answer (DESCRIBE DETAIL would also load the table's snapshot: a second
    # or so per call on a Hive metastore).
    found = _describe(spark, table.name).get("Location")
    if found:
        return found
    return spark.sql(f"DESCRIBE DETAIL {table.name}").collect()[0]["location"]


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


# The reference library's table helpers, on this package's rule for names and paths above.

def is_path(name_or_path: str) -> bool:
    """Whether the engine's rule reads `name_or_path` as a path or URI rather than a table name
    (ConfigError for text that is neither)."""
    if not isinstance(name_or_path, str):
        raise ConfigError(f"a table is a name or a path, not {name_or_path!r}")
    return _core.table_name(name_or_path, "table") is None


def table_ref(name_or_path: str) -> str:
    """How Spark SQL names the table: its name, or delta.`path` for a path."""
    return sql_ref(TableArg(name_or_path, "table"))


def exists(spark: SparkSessionLike, name_or_path: str) -> bool:
    """Whether the table exists (ConfigError for a view or a table that is not Delta)."""
    return _inspect(spark, TableArg(name_or_path, "table")) is not None


def version(spark: SparkSessionLike, name_or_path: str) -> int:
    """The latest version of an existing table."""
    return sql_version(spark, table_ref(name_or_path))


def sql_version(spark: Any, table_sql: str) -> int:
    """The latest version of the table Spark SQL names `table_sql` (see ``sql_ref``)."""
    return int(spark.sql(f"DESCRIBE HISTORY {table_sql} LIMIT 1").collect()[0]["version"])


def delta_table(spark: SparkSessionLike, name_or_path: str) -> DeltaTable:
    """delta-spark's DeltaTable of the table, by name or by path."""
    from delta.tables import DeltaTable

    table = TableArg(name_or_path, "table")
    return DeltaTable.forName(spark, table.name) if table.is_name else DeltaTable.forPath(spark, table.text)


# A column as create_if_not_exists and migrations.add_columns take it: its name, its type (Spark
# SQL type text or a pyspark DataType) and its comment.
ColumnDef = tuple[str, "str | DataType", "str | None"]


def _column_defs(columns: Any) -> list[tuple[str, str, str | None]]:
    """`columns` as the engine's SQL builders take them: each type as Spark SQL text."""
    out = []
    for column in columns:
        if not isinstance(column, tuple | list) or len(column) != 3 or not isinstance(column[0], str):
            raise ConfigError(f"a column is (name, type, comment), not {column!r}")
        name, sql_type, comment = column
        if not isinstance(sql_type, str):
            simple = getattr(sql_type, "simpleString", None)
            if simple is None:
                raise ConfigError(f"column {name!r} has type {sql_type!r}: give Spark SQL type text or a "
                                  f"pyspark DataType")
            sql_type = simple()
        if comment is not None and not isinstance(comment, str):
            raise ConfigError(f"column {name!r} has comment {comment!r}: give text or None")
        out.append((name, sql_type, comment))
    return out


def create_if_not_exists(spark: SparkSessionLike, name_or_path: str, columns: Iterable[ColumnDef],
                         comment: str | None = None, properties: Mapping[str, str] | None = None) -> None:
    """Creates a Delta table of `columns` (with their comments), its `comment` and table
    `properties`, by name or at a path; a table that exists is left as it is. A column whose
    name Spark stores only with column mapping turns it on (delta.columnMapping.mode = 'name')."""
    table = TableArg(name_or_path, "table")
    statement = _core.user_table_sql(table.text, _column_defs(columns), comment, dict(properties or {}))
    if _inspect(spark, table) is None:
        spark.sql(statement)


def commit_after(spark: SparkSessionLike, name_or_path: str, before: int, metadata: str) -> Row | None:
    """The table's first commit after version `before` whose userMetadata is `metadata` (a row
    of DESCRIBE HISTORY), or None: whether a write that lost track of its outcome landed."""
    table_sql = table_ref(name_or_path)
    history = spark.sql(f"DESCRIBE HISTORY {table_sql}").where(f"version > {int(before)}")
    rows = sorted(history.collect(), key=lambda row: row["version"])
    return next((row for row in rows if row["userMetadata"] == metadata), None)


def is_conflict(exc: BaseException) -> bool:
    """Whether an error is a Delta commit lost to a concurrent one (Delta's DELTA_CONCURRENT_*
    errors and its Concurrent*Exception classes, which Spark Connect passes on as text)."""
    text = str(exc)
    return "DELTA_CONCURRENT" in text or ("Concurrent" in text and "Exception" in text)


def retrying(commit: Callable[[], T]) -> T:
    """``commit()``, run again while it loses to a concurrent Delta commit, after the delays the
    engine waits between its own attempts (``_core.ConflictRetry``); any other error, or a
    conflict after the engine would have given up, is raised. For an idempotent ``commit``."""
    return retry_conflicts(commit)


def retry_conflicts(commit: Callable[[], T], table_version: Callable[[], int] | None = None) -> T:
    """``retrying``, telling the engine's retry the table's version after each lost commit when
    `table_version` reads it, so that it knows whether other writers are still committing."""
    retry = _core.ConflictRetry()
    while True:
        try:
            return commit()
        except Exception as error:  # noqa: BLE001 (only conflicts are retried)
            if not is_conflict(error):
                raise
            if table_version is not None:
                retry.saw_table_version(table_version())
            delay = retry.next_delay_seconds()
            if delay is None:
                raise
            time.sleep(delay)
