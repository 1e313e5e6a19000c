"""Bronze tables' migrations, in the order 0.8.0 took them; the columns, types and comments
are the engine's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mssql_cdc import _core
from mssql_cdc.migrations.base import (Migration, add_columns, adding, commenting,  # noqa: F401
                                       definition_columns, definition_comments, set_comments)

if TYPE_CHECKING:
    from mssql_cdc.types import SparkSessionLike

# Bronze's table comment and its own columns' comments (the captured ones have none).
_BRONZE_COLUMNS, BRONZE_COMMENT = _core.table_definition("bronze")
BRONZE_COLUMN_COMMENTS = {name: comment for name, _, comment in _BRONZE_COLUMNS}

_SNAPSHOT_COLUMNS = definition_columns("bronze", "_snapshot", "_chunk")


def _snapshot_columns(spark: SparkSessionLike, table: str) -> None:
    adding(_SNAPSHOT_COLUMNS)(spark, table)
    commenting(definition_comments("bronze", "_start_lsn"))(spark, table)


MIGRATIONS = [
    Migration("capture instance comments", commenting(definition_comments("bronze", "_capture_instance",
                                                                          "_command_id"))),
    Migration("snapshot and chunk columns", _snapshot_columns),
]
