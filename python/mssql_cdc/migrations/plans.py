"""The plans table's migrations: none yet (its schema version is 0)."""

from __future__ import annotations

from mssql_cdc.migrations.base import Migration, set_comments  # noqa: F401 (0.8.0's exports it too)

MIGRATIONS: list[Migration] = []
