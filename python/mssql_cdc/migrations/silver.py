"""The silver table's migrations: none yet (its schema version is 0)."""

from __future__ import annotations

from mssql_cdc.migrations.base import Migration

MIGRATIONS: list[Migration] = []
