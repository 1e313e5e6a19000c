"""Schema versions of the tables this package writes.

Each table is created with the columns of its kind's current definition (the engine's,
docs/reference/tables.md) and stamped with its kind's schema version in the table property
``mssql_cdc.schema_version``: the number of migrations the reference library 0.8.0 knows for
that kind, whose columns these are, so that a table written here reads as fully migrated to
either library. A table with a lower number is brought up to date by the next stream, silver
apply or verdict that opens it, before anything is written.
"""

from __future__ import annotations

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError

SCHEMA_VERSION_PROPERTY = _core.SCHEMA_VERSION_PROPERTY


def current_version(kind: str) -> int:
    """The schema version a table of `kind` (bronze, control, facts, plans, reconcile, silver)
    is created with."""
    if not isinstance(kind, str):
        raise ConfigError(f"a table kind is a string such as 'facts', not {kind!r}")
    return int(_core.schema_version(kind))


__all__ = ["SCHEMA_VERSION_PROPERTY", "current_version"]
