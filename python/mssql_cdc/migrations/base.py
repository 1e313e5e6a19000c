"""Schema versions of the tables this package writes, and the steps that bring a table up to one.

Each table is created with the columns of its kind's current definition (the engine's,
docs/reference/tables.md) and stamped with its kind's schema version in the table property
``mssql_cdc.schema_version``: the number of migrations the reference library 0.8.0 knows for
that kind, whose columns these are, so that a table written here reads as fully migrated to
either library. A table with a lower number is brought up to date (``migrate``) by the next
stream, silver apply or verdict that opens it, before anything is written; one with a higher
number, or whose ``mssql_cdc.min_version`` is higher, was migrated by a newer release and is
refused with the version it needs.

The engine migrates a table in one step, to its kind's current definition: the columns it lacks,
then the stamp. Each kind's ``MIGRATIONS`` name the steps 0.8.0 took to get there, for code that
runs them one at a time; their columns and comments are the engine's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError
from mssql_cdc.tables import (  # noqa: F401 (0.8.0's migrations.base exports these too)
    ColumnDef, TableArg, _column_defs, _inspect, create_if_not_exists, delta_table, is_path, migration_sql,
    properties_of, read, retrying, sql_ref, table_ref)

if TYPE_CHECKING:
    from mssql_cdc.types import SparkSessionLike

log = logging.getLogger("mssql_cdc")

SCHEMA_VERSION_PROPERTY = _core.SCHEMA_VERSION_PROPERTY
MIN_VERSION_PROPERTY = _core.MIN_VERSION_PROPERTY

# The kinds whose definitions the engine holds, and so migrates itself.
_ENGINE_KINDS = ("bronze", "facts", "control", "plans")


@dataclass(frozen=True)
class Migration:
    """One step of a kind's schema: what it changes, and ``apply(spark, table)``, which makes
    that change to a table (idempotent: a step run twice changes nothing the second time)."""

    description: str
    apply: Callable[[SparkSessionLike, str], None]


def current_version(kind: str) -> int:
    """The schema version a table of `kind` (bronze, control, facts, plans, reconcile, silver)
    is created with."""
    if not isinstance(kind, str):
        raise ConfigError(f"a table kind is a string such as 'facts', not {kind!r}")
    return int(_core.schema_version(kind))


def migrate(spark: SparkSessionLike, table: str, kind: str) -> int:
    """Brings an existing `kind` table up to its current definition (the columns it lacks, with
    their comments, then the stamp) and returns its schema version. Refused, before anything is
    written, when it is not a table of `kind` or a newer release migrated it."""
    known = current_version(kind)
    arg = TableArg(table, kind)
    if _inspect(spark, arg) is None:
        raise ConfigError(f"table {table} does not exist; create it with migrations.ensure, or name "
                          f"the {kind} table itself")
    properties = properties_of(spark, sql_ref(arg))
    _core.check_schema_version(properties, kind, f"table {table}")  # a whole number, not above ours
    have = int(properties.get(SCHEMA_VERSION_PROPERTY, "0"))
    if kind not in _ENGINE_KINDS:
        return have
    for statement in migration_sql(spark, arg, kind, properties=properties):
        log.info("mssql_cdc: %s", statement.split(" (", 1)[0])
        retrying(lambda statement=statement: spark.sql(statement))
    return max(have, known)


def ensure(spark: SparkSessionLike, table: str, kind: str, columns: Iterable[ColumnDef], comment: str) -> None:
    """Creates `table` with `columns` and `comment`, stamped with its kind's current version,
    when it does not exist; then migrates it. Columns every table of the kind has are required
    (checked before anything is created)."""
    known = current_version(kind)
    defs = _column_defs(columns)
    if kind in _ENGINE_KINDS:
        _core.check_table_columns(kind, [name for name, _, _ in defs], f"the columns given for {table}")
    create_if_not_exists(spark, table, defs, comment, {SCHEMA_VERSION_PROPERTY: str(known)})
    migrate(spark, table, kind)


def add_columns(spark: SparkSessionLike, table: str, columns: Iterable[ColumnDef]) -> None:
    """Adds those `columns` (with their comments) the table lacks, its names compared ignoring
    case; rows already written hold NULL in them. Adding them again changes nothing."""
    arg = TableArg(table, "table")
    statement = _core.add_columns_sql(table, read(spark, arg).columns, _column_defs(columns))
    if statement is not None:
        retrying(lambda: spark.sql(statement))


def set_comments(spark: SparkSessionLike, table: str, columns: Mapping[str, str],
                 table_comment: str | None = None) -> None:
    """Sets the comments of the named columns, and the table's comment when given."""
    TableArg(table, "table")
    for statement in _core.set_comments_sql(table, list(dict(columns).items()), table_comment):
        retrying(lambda statement=statement: spark.sql(statement))


def _definition(kind: str) -> dict[str, tuple[str, str, str | None]]:
    columns, _ = _core.table_definition(kind)
    return {column[0]: tuple(column) for column in columns}


def definition_columns(kind: str, *names: str) -> list[ColumnDef]:
    """The named columns of the engine's definition of `kind`, as (name, type, comment)."""
    defined = _definition(kind)
    return [defined[name] for name in names]


def definition_comments(kind: str, *names: str) -> dict[str, str]:
    """The comments of the named columns in the engine's definition of `kind`."""
    defined = _definition(kind)
    return {name: defined[name][2] for name in names}


def adding(columns: list[ColumnDef]) -> Callable[[SparkSessionLike, str], None]:
    """A migration step that adds `columns`."""
    return lambda spark, table: add_columns(spark, table, columns)


def commenting(comments: Mapping[str, str]) -> Callable[[SparkSessionLike, str], None]:
    """A migration step that sets the comments of those of `comments`' columns the table has."""
    def apply(spark: SparkSessionLike, table: str) -> None:
        have = {name.lower() for name in read(spark, TableArg(table, "table")).columns}
        set_comments(spark, table, {name: text for name, text in comments.items() if name.lower() in have})
    return apply
