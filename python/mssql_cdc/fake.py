"""A CDC database for tests, as mssql-cdc-pyspark 0.8.0's ``mssql_cdc.fake`` offers it, kept
by the simulated SQL Server (``mssql-cdc sim``): ``FakeCdcDatabase`` writes change rows,
idle entries, cleanups, capture instances and DDL; streams read it with
``{"backend": "fake", "fakePath": path}`` and ``FakeCdcClient(path)`` asks it questions.

Promises:
- ``path`` is a directory holding one simulated database (``database.sim``); a
  FakeCdcDatabase made on a directory that has one opens it and adds the capture instances it
  lacks.
- Each capture instance reads a table of its own name in schema dbo (0.8.0's layout:
  ``dbo_orders`` reads ``dbo.dbo_orders``), created with the columns ``columns`` gives in
  Spark DDL (stored as the SQL Server types that read back as them) and the primary key ``keys``
  gives; a table needs both, since the simulated table is a real one.
- ``commit`` writes the change rows given, as SQL Server's capture job would from the log:
  operation 2 an insert, 1 a delete, 3 then 4 an update's before and after images; the table
  follows, so snapshots read the rows the changes leave. Times are UTC (``at``; now when
  omitted), on the database's clock.
- Names and rules match 0.8.0's fake where this page does not say otherwise; differences are
  listed in docs/spark.md.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from mssql_cdc import _core
from mssql_cdc._glue import json_scalar, utc_micros
from mssql_cdc.client import CaptureInstance, CdcClient, DdlChange, SourceTable, SqlCdcClient  # noqa: F401 (exported)
from mssql_cdc.errors import ConfigError
from mssql_cdc.lsn import Lsn, from_int

DEFAULT_START_LSN = 11821949038624769  # 0x0000002A000001000001, where a new database's log starts
# When the capture instances a database is made with were enabled (0.8.0 records no time for
# them): before any time a test commits at, so that an instance added later is the newer.
CREATED = datetime(2000, 1, 1)


def _utc_micros(at: datetime | None) -> int:
    return utc_micros(datetime.now(_dt.timezone.utc) if at is None else at, "at")


class FakeCdcDatabase:
    """The writer of a test's CDC database (see the module's promises)."""

    def __init__(self, path: str, capture_instances: Iterable[str], start_lsn: int = DEFAULT_START_LSN,
                 keys: dict[str, str | list[str]] | None = None, columns: dict[str, str] | None = None,
                 computed: dict[str, list[str]] | None = None) -> None:
        names = [capture_instances] if isinstance(capture_instances, str) else list(capture_instances)
        keys, columns = dict(keys or {}), dict(columns or {})
        if computed and any(computed.values()):
            raise ConfigError("computed columns are not simulated: a simulated table stores every column; leave "
                              "computed out and the columns out of `columns`")
        tables = {}
        for ci in names:
            if ci not in columns:
                raise ConfigError(f"capture instance {ci!r} needs its columns: give columns={{{ci!r}: 'id INT, "
                                  "status STRING'}} (Spark DDL); the simulated table is created with them")
            key = keys.get(ci)
            key = [key] if isinstance(key, str) else list(key or [])
            if not key:
                raise ConfigError(f"capture instance {ci!r} needs its key: give keys={{{ci!r}: 'id'}}; the simulated "
                                  "table is created with that primary key")
            declared = _core.SimDatabase.declarations_of(columns[ci])
            missing = [k for k in key if k.casefold() not in {n.casefold() for n, _ in declared}]
            if missing:
                raise ConfigError(f"capture instance {ci!r}: key columns {missing} are not among its columns")
            tables[ci] = (declared, key)
        self.path = os.fspath(path)
        self._file = _core.fake_database_file(self.path)
        if os.path.exists(self._file):
            self._db = _core.open_sim_database(self._file)
        else:
            os.makedirs(self.path, exist_ok=True)
            self._db = _core.create_sim_database(self._file, "fake", _utc_micros(CREATED),
                                                 None if start_lsn == DEFAULT_START_LSN else from_int(start_lsn))
        existing = {name for name, _ in self._db.instances()}
        for ci, (declared, key) in tables.items():
            if ci in existing:
                continue
            table = self._table_name(ci)
            if table not in self._db.tables():
                self._db.create_table(table, declared, key)
            self._db.enable_cdc(table, ci, [])

    def commit(self, capture_instance: str, changes: Sequence[tuple[int, dict[str, Any]]],
               at: datetime | None = None) -> str:
        """One transaction of `changes` ((operation, row) pairs) at `at`; returns its commit LSN."""
        self._db.set_clock(_utc_micros(at))
        lsn = self._db.log_changes(self._db.table_of(capture_instance), self._payload(changes))
        if lsn is None:
            raise ConfigError("a commit needs at least one change")
        return lsn

    def commit_before_read(self, capture_instance: str, changes: Sequence[tuple[int, dict[str, Any]]],
                           at: datetime | None = None) -> None:
        """A transaction that commits just before the next snapshot read (a table's current rows)
        starts: a writer between a snapshot's stamp and its SELECT. Checked when it commits."""
        if not changes:
            raise ConfigError("a commit needs at least one change")
        self._db.queue_before_snapshot_read(self._db.table_of(capture_instance), self._payload(changes),
                                            None if at is None else _utc_micros(at))

    @staticmethod
    def _payload(changes: Sequence[tuple[int, dict[str, Any]]]) -> str:
        return json.dumps([[op, {k: json_scalar(v) for k, v in row.items()}] for op, row in changes])

    def idle(self, at: datetime | None = None) -> str:
        """An lsn_time_mapping entry without change rows (the capture job's idle entry); its LSN."""
        self._db.set_clock(_utc_micros(at))
        return self._db.write_idle_entry()

    def cleanup(self, capture_instance: str, low_water_mark: str) -> None:
        """sys.sp_cdc_cleanup_change_table: the instance's changes below `low_water_mark` are gone."""
        self._db.cleanup_instance(capture_instance, low_water_mark)

    def add_capture_instance(self, table_ci_name: str, columns: str | Sequence[str | Sequence[str]] | None,
                             at: datetime | None = None, name: str | None = None) -> str:
        """A second capture instance of the table `table_ci_name` reads, capturing `columns`
        (Spark DDL, names, or [name, type] pairs; None: every column); columns the table lacks
        are added to it first. Named `<table>_v2` (the next free number) unless `name` is given."""
        table = self._db.table_of(table_ci_name)
        live = {c.casefold() for c in self._db.table_columns(table)}
        captured = []
        for column, declaration in self._columns_of(columns):
            if column.casefold() not in live:
                if declaration is None:
                    raise ConfigError(f"column {column!r} is not in {table}: give its type to add it")
                self._db.set_clock(_utc_micros(at))
                self._db.add_column(table, column, declaration)
                live.add(column.casefold())
            captured.append(column)
        if name is None:
            taken = {n for n, _ in self._db.instances()}
            base, number = table.split(".", 1)[1], 2
            while f"{base}_v{number}" in taken:
                number += 1
            name = f"{base}_v{number}"
        self._db.set_clock(_utc_micros(at))
        return self._db.enable_cdc(table, name, captured)

    def drop_capture_instance(self, name: str) -> None:
        """sys.sp_cdc_disable_table for one instance: it and its change rows are gone."""
        self._db.disable_cdc(name)

    def ddl(self, capture_instance: str, column: str | None, command: str, new_type: str | None = None) -> str:
        """A DDL statement on the instance's table, recorded in the DDL history of every instance
        of it: DROP drops `column`; ADD adds it, typed by `new_type` (Spark) or the SQL Server
        type after its name in `command`; otherwise `new_type` alters its type. Returns its LSN."""
        table = self._db.table_of(capture_instance)
        words = command.upper()
        if column is None:
            raise ConfigError("ddl needs the column it changes")
        if re.search(r"\bDROP\b", words):
            self._db.drop_column(table, column)
        elif re.search(r"\bADD\b", words):
            self._db.add_column(table, column, self._declaration(column, command, new_type))
        elif new_type is not None:
            self._db.alter_column(table, column, self._declaration(column, command, new_type))
        else:
            raise ConfigError(f"ddl {command!r}: say ADD or DROP, or give new_type for an ALTER COLUMN")
        return self._db.last_ddl_lsn(capture_instance)

    def _declaration(self, column: str, command: str, new_type: str | None) -> str:
        if new_type is not None:
            return _core.SimDatabase.declarations_of(f"`{column}` {new_type}")[0][1]
        found = re.search(r"\bADD\s+(?:COLUMN\s+)?\[?" + re.escape(column) + r"\]?\s+(.+?)\s*;?\s*$", command,
                          re.IGNORECASE)
        if not found:
            raise ConfigError(f"ddl {command!r}: give new_type, or the column's SQL Server type after its name")
        return re.sub(r"\s+(NOT\s+)?NULL\s*$", "", found.group(1), flags=re.IGNORECASE)

    @staticmethod
    def _columns_of(columns: str | Sequence[str | Sequence[str]] | None) -> list[tuple[str, str | None]]:
        if columns is None:
            return []
        if isinstance(columns, str):
            return [(n, d) for n, d in _core.SimDatabase.declarations_of(columns)]
        out = []
        for column in columns:
            if isinstance(column, str):
                out.append((column, None))
            else:
                column_name, spark_type = column
                out.append((column_name, _core.SimDatabase.declarations_of(f"`{column_name}` {spark_type}")[0][1]))
        return out

    @staticmethod
    def _table_name(capture_instance: str) -> str:
        return f"dbo.{capture_instance}"


class FakeCdcClient(SqlCdcClient):
    """A CdcClient of the database a FakeCdcDatabase keeps in `path` (backend fake)."""

    def __init__(self, path: str) -> None:
        self._init({"backend": "fake", "fakePath": os.fspath(path)})
        self.backend = None
