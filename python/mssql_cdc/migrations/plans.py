"""The plans table's migrations: none. A plans table is made in mssql-cdc-pyspark 0.8.0's layout
at 0.8.0's current version of it, 1, and is never migrated; one of an earlier release (one row
per chunk, version 0) keeps its layout."""

from __future__ import annotations

from mssql_cdc.migrations.base import Migration, set_comments  # noqa: F401 (0.8.0's exports it too)

MIGRATIONS: list[Migration] = []
