"""Schema versions and migrations of the tables this package writes (``base`` says how), with
each kind's steps in a module of its own: ``bronze``, ``control``, ``facts``, ``plans``,
``reconcile`` and ``silver``."""

from __future__ import annotations

from mssql_cdc.migrations.base import (MIN_VERSION_PROPERTY, SCHEMA_VERSION_PROPERTY, Migration, add_columns,
                                       current_version, ensure, migrate, set_comments)

__all__ = ["MIN_VERSION_PROPERTY", "SCHEMA_VERSION_PROPERTY", "Migration", "add_columns", "current_version",
           "ensure", "migrate", "set_comments"]
