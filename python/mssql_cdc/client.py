"""A client of the CDC database, as mssql-cdc-pyspark 0.8.0's ``mssql_cdc.client`` names it:
``make_client(options)`` returns a ``CdcClient`` whose questions (LSNs, commit times, capture
instances, change rows, keys and current rows of a source table) the C++ engine's ``Source``
answers, the same reader ``stream`` and ``snapshot`` use, over ODBC or the simulated database.

Promises:
- ``make_client`` reads its options as every source option is read (names ignoring case,
  values checked by the engine) and opens nothing until they are valid; ``captureInstance``
  is not needed. ``backend`` ``mssql-python`` (the default), ``arrow-odbc`` and ``odbc`` read
  through the engine's ODBC reader, ``sim`` a simulated database file (``simPath``).
- Times: ``time_to_lsn`` takes a UTC instant (a naive ``datetime`` is UTC); ``lsn_to_time``
  and ``DdlChange.commit_ts`` are UTC, ``YYYY-MM-DDTHH:MM:SS.mmm``, converted from the
  server's clock by the ``sourceTimeZone`` rule, as the offsets of a stream are.
- Key bounds of a source table are given and returned as tuples, one value per key column.
  Integer keys come back as ``int``; other keys as the text the server's CAST turns back
  into the same value.
- ``isolation`` arguments are the client's ``isolationLevel`` (its reads all use one); another
  level is refused with a ConfigError rather than read differently.
- The backends ``MssqlPythonBackend`` and ``ArrowOdbcBackend`` run the caller's own T-SQL
  through the driver package of their name (``pip install mssql-python`` or ``arrow-odbc``,
  imported when first used) and hand the connection settings to ``SqlCdcClient``, whose
  questions the engine answers on its own connection.
"""

from __future__ import annotations

from datetime import datetime
import json
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any, NamedTuple, Protocol, runtime_checkable

import pyarrow as pa

from mssql_cdc import _core, lsn as _lsn
from mssql_cdc._glue import copy_options, get_option, json_scalar, set_option, utc_micros
from mssql_cdc.errors import ConfigError, DataLossError, SchemaChangedError, is_data_loss, is_schema_changed
from mssql_cdc.lsn import Lsn
from mssql_cdc.payloads import SnapshotExtent

__all__ = ["ArrowOdbcBackend", "Backend", "CaptureInstance", "CdcClient", "DataLossError", "DdlChange", "Lsn",
           "MssqlPythonBackend", "SchemaChangedError", "SourceTable", "SqlCdcClient", "is_data_loss",
           "is_schema_changed", "last_bound", "make_client", "plan_chunks", "snapshot_plan"]

DEFAULT_MAX_BYTES_PER_BATCH = 64 << 20


class CaptureInstance(NamedTuple):
    """A capture instance of a source table: its captured columns and their SQL Server types."""
    name: str
    start_lsn: Lsn | None
    columns: list[str]
    column_types: list[str | None]
    computed: tuple[str, ...] = ()


class SourceTable(NamedTuple):
    """The source table of a capture instance and the key its instance was enabled with."""
    schema: str
    table: str
    keys: list[str]
    start_lsn: Lsn | None


class DdlChange(NamedTuple):
    """One row of sys.sp_cdc_get_ddl_history; ``commit_ts`` in UTC."""
    lsn: Lsn
    commit_ts: str | None
    command: str


@runtime_checkable
class Backend(Protocol):
    """Runs T-SQL: ``scalar`` the first column of the first row, ``batches`` every row."""

    def batches(self, sql: str, params: Sequence[str], batch_size: int) -> Iterator[pa.RecordBatch]: ...

    def scalar(self, sql: str, params: Sequence[str] = ()) -> Any:
        for batch in self.batches(sql, params, 1):
            if batch.num_rows:
                return batch.column(0)[0].as_py()
        return None

    def close(self) -> None:
        return None


@runtime_checkable
class CdcClient(Protocol):
    """What a CDC database answers: the members of mssql-cdc-pyspark 0.8.0's protocol."""

    def max_lsn(self) -> Lsn | None: ...
    def min_lsn(self, capture_instance: str) -> Lsn: ...
    def increment_lsn(self, lsn: str) -> Lsn: ...
    def decrement_lsn(self, lsn: str) -> Lsn: ...
    def lsn_to_time(self, lsn: str) -> str | None: ...
    def time_to_lsn(self, ts_utc: datetime) -> Lsn | None: ...
    def nth_commit_after(self, lsn: str, n: int) -> Lsn | None: ...
    def split_points(self, capture_instance: str, from_lsn: str, to_lsn: str,
                     n: int) -> list[tuple[Lsn, Lsn, int]]: ...
    def source_table(self, capture_instance: str) -> SourceTable: ...
    def capture_instances(self, capture_instance: str) -> list[CaptureInstance]: ...
    def forget_columns(self) -> None: ...
    def ddl_history(self, capture_instance: str, from_lsn: str, to_lsn: str) -> list[DdlChange]: ...
    def captured_columns(self, capture_instance: str) -> str: ...
    def present_columns(self, capture_instance: str, columns: Sequence[str]) -> list[str]: ...
    def key_range(self, schema: str, table: str, key: str, lo: int | None = None, hi: int | None = None,
                  isolation: str | None = None) -> tuple[Any, Any]: ...
    def key_types(self, capture_instance: str, keys: Sequence[str]) -> list[str | None]: ...
    def key_tiles(self, schema: str, table: str, keys: Sequence[str], n: int) -> list[tuple[Any, ...]]: ...
    def row_estimate(self, schema: str, table: str) -> int: ...
    def key_max(self, schema: str, table: str, keys: Sequence[str]) -> tuple[Any, ...] | None: ...
    def key_bound(self, schema: str, table: str, keys: Sequence[str], types: Sequence[str] | None,
                  lo: tuple[Any, ...] | None, hi: tuple[Any, ...] | None, n: int,
                  isolation: str | None = None) -> tuple[Any, ...] | None: ...
    def key_buckets(self, schema: str, table: str, key: str | None, kind: str | None, width: int,
                    lo: int | None = None, hi: int | None = None,
                    isolation: str | None = None) -> list[tuple[int, int, Decimal | None]]: ...
    def iter_table(self, schema: str, table: str, columns: Sequence[str], keys: Sequence[str],
                   types: Sequence[str] | None, lo: tuple[Any, ...] | None, hi: tuple[Any, ...] | None,
                   batch_size: int, isolation: str | None = None) -> Iterator[pa.RecordBatch]: ...
    def iter_changes(self, capture_instance: str, from_lsn: str, to_lsn: str, columns: Sequence[str],
                     include_command_id: bool, batch_size: int) -> Iterator[pa.RecordBatch]: ...
    def ping(self, samples: int = 3) -> list[float]: ...
    def network_wait_ms(self) -> int | None: ...
    def clock(self) -> tuple[str | None, int | None]: ...
    def refresh_clock(self) -> None: ...
    def set_clock(self, zone: str | None, offset_min: int | None) -> None: ...
    def close(self) -> None: ...


class _DriverBackend(Backend):
    """A backend of connection settings; the driver package is imported when T-SQL first runs.
    ``scalar`` is Backend's, over ``batches``."""

    MAX_VALUE_SIZE = 64 << 10
    _package = ""

    def __init__(self, connection_string: str, timeout: int = 30,
                 max_bytes_per_batch: int = DEFAULT_MAX_BYTES_PER_BATCH, *, user: str | None = None,
                 password: str | None = None, access_token: str | None = None) -> None:
        if not isinstance(connection_string, str) or not connection_string.strip():
            raise ConfigError("a backend needs a connection string, e.g. "
                              "'Server=db.example.com;Database=sales;Encrypt=yes'")
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0:
            raise ConfigError(f"timeout is whole seconds >= 0, not {timeout!r}")
        if isinstance(max_bytes_per_batch, bool) or not isinstance(max_bytes_per_batch, int) \
                or max_bytes_per_batch < 1:
            raise ConfigError(f"max_bytes_per_batch is a positive number of bytes, not {max_bytes_per_batch!r}")
        self._settings = {"connectionString": connection_string, "connectTimeout": str(timeout)}
        for name, value in (("user", user), ("password", password), ("accessToken", access_token)):
            if value is not None:
                self._settings[name] = value
        self._max_bytes_per_batch = max_bytes_per_batch
        self._connection: Any = None

    def __repr__(self) -> str:  # the connection string and credentials are secrets
        return f"{type(self).__name__}(...)"

    def source_options(self) -> dict[str, str]:
        """The source options this backend's connection is: what SqlCdcClient opens the engine with."""
        return dict(self._settings)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and hasattr(connection, "close"):
            connection.close()

    def _connection_text(self) -> str:
        """The connection string with the login as UID and PWD; a value holding ; { } or a space
        at an end is braced, as ODBC quotes one (FreeTDS reads braces literally elsewhere)."""
        text = self._settings["connectionString"].rstrip(";")
        for key, name in (("user", "UID"), ("password", "PWD")):
            if key in self._settings:
                value = self._settings[key]
                if any(c in value for c in ";{}") or value != value.strip():
                    value = "{" + value.replace("}", "}}") + "}"
                text += f";{name}={value}"
        return text

    def _import(self) -> Any:
        try:
            return __import__(self._package.replace("-", "_"))
        except ImportError as error:
            raise ImportError(f"{type(self).__name__} runs T-SQL through the {self._package} package, which is not "
                              f"installed: pip install {self._package}") from error


class MssqlPythonBackend(_DriverBackend):
    """Runs T-SQL through Microsoft's mssql-python driver."""

    _package = "mssql-python"

    def batches(self, sql: str, params: Sequence[str], batch_size: int) -> Iterator[pa.RecordBatch]:
        if self._connection is None:
            mssql_python = self._import()
            text = self._connection_text()
            attrs = {}
            if "accessToken" in self._settings:
                attrs[1256] = _access_token_struct(self._settings["accessToken"])  # SQL_COPT_SS_ACCESS_TOKEN
            self._connection = mssql_python.connect(text, autocommit=True, timeout=int(self._settings["connectTimeout"]),
                                                    attrs_before=attrs or None)
        cursor = self._connection.cursor()
        try:
            cursor.execute(sql, *params) if params else cursor.execute(sql)
            names = [d[0] for d in cursor.description] if cursor.description else []
            while names:
                rows = cursor.fetchmany(max(1, batch_size))
                if not rows:
                    break
                yield pa.RecordBatch.from_pydict({n: [r[i] for r in rows] for i, n in enumerate(names)})
        finally:
            cursor.close()


class ArrowOdbcBackend(_DriverBackend):
    """Runs T-SQL through arrow-odbc (unixODBC and an installed SQL Server driver)."""

    _package = "arrow-odbc"

    def batches(self, sql: str, params: Sequence[str], batch_size: int) -> Iterator[pa.RecordBatch]:
        if "accessToken" in self._settings:
            raise ConfigError("ArrowOdbcBackend cannot log in with an access token: use MssqlPythonBackend")
        arrow_odbc = self._import()
        reader = arrow_odbc.read_arrow_batches_from_odbc(
            query=sql, connection_string=self._connection_text(), parameters=list(params) or None,
            batch_size=max(1, batch_size), max_bytes_per_batch=self._max_bytes_per_batch, max_text_size=self.MAX_VALUE_SIZE,
            max_binary_size=self.MAX_VALUE_SIZE, login_timeout_sec=int(self._settings["connectTimeout"]))
        if reader is None:
            return
        yield from reader


def _access_token_struct(token: str) -> bytes:
    """The ACCESSTOKEN structure Driver 18 takes before connecting: length, then UTF-16LE bytes."""
    data = token.encode("utf-16-le")
    return len(data).to_bytes(4, "little") + data


def _key_tuple(text: str | None) -> tuple[Any, ...] | None:
    if text is None:
        return None
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else (value,)


def _key_json(key: Sequence[Any] | Any | None) -> str:
    """A key tuple as the engine's bound: a scalar for one column, a list for several."""
    if key is None:
        return "null"
    if isinstance(key, (tuple, list)):
        values = [json_scalar(v) for v in key]
        return json.dumps(values[0] if len(values) == 1 else values)
    return json.dumps(json_scalar(key))


class SqlCdcClient:
    """A ``CdcClient`` over the engine's reader of the database ``backend`` connects to."""

    timezone: str | None = None  # the source clock's zone, as the sourceTimeZone rule found it

    def __init__(self, backend: Backend, source_timezone: str = "auto", lock_timeout_ms: int | None = None) -> None:
        if not isinstance(backend, _DriverBackend):
            raise ConfigError(f"SqlCdcClient reads through the engine, which connects by itself: give it "
                              f"MssqlPythonBackend or ArrowOdbcBackend (or use make_client), not "
                              f"{type(backend).__name__}")
        options = backend.source_options()
        options["sourceTimeZone"] = source_timezone
        if lock_timeout_ms is not None:
            options["lockTimeoutMs"] = str(lock_timeout_ms)
        self._init(options)
        self.backend = backend

    @classmethod
    def _from_options(cls, options: dict[str, str]) -> SqlCdcClient:
        client = cls.__new__(cls)
        client._init(options)
        client.backend = None
        return client

    def _init(self, options: dict[str, str]) -> None:
        self._source = _core.open_source(options)
        self._isolation = get_option(options, "isolationLevel") or _core.isolation_levels()[0][0]
        self.timezone = self._source.time_zone

    # LSNs and times
    def max_lsn(self) -> Lsn | None:
        found = self._source.max_lsn()
        return None if found is None else Lsn(found)

    def min_lsn(self, capture_instance: str) -> Lsn:
        """sys.fn_cdc_get_min_lsn: the zero LSN for an instance that does not exist."""
        return Lsn(self._source.min_lsn(capture_instance))

    def increment_lsn(self, lsn: str) -> Lsn:
        return Lsn(_core.lsn_increment(_lsn.normalize(lsn)))

    def decrement_lsn(self, lsn: str) -> Lsn:
        return Lsn(_core.lsn_decrement(_lsn.normalize(lsn)))

    def lsn_to_time(self, lsn: str) -> str | None:
        """The UTC commit time of the lsn_time_mapping entry at exactly `lsn`; None when none is."""
        return self._source.commit_time(_lsn.normalize(lsn))

    def time_to_lsn(self, ts_utc: datetime) -> Lsn | None:
        """The last commit at or before `ts_utc` (idle entries included); None when none is that old."""
        found = self._source.last_commit_at_or_before(utc_micros(ts_utc))
        return None if found is None else Lsn(found)

    def nth_commit_after(self, lsn: str, n: int) -> Lsn | None:
        found = self._source.nth_commit_after(_lsn.normalize(lsn), n)
        return None if found is None else Lsn(found)

    def split_points(self, capture_instance: str, from_lsn: str, to_lsn: str, n: int) -> list[tuple[Lsn, Lsn, int]]:
        return [(Lsn(b), Lsn(x), rows) for b, x, rows in
                self._source.split_points(capture_instance, _lsn.normalize(from_lsn), _lsn.normalize(to_lsn), n)]

    # Capture instances
    def source_table(self, capture_instance: str) -> SourceTable:
        found = self._source.resolve(capture_instance)
        return SourceTable(found["source_schema"], found["source_table"], list(found["index_columns"]),
                           Lsn(found["start_lsn"]))

    def capture_instances(self, capture_instance: str) -> list[CaptureInstance]:
        """Every instance of the table `capture_instance` reads, oldest first, with its columns."""
        found = self._source.resolve(capture_instance)
        out = []
        for ci in self._source.table_instances(found["source_schema"], found["source_table"]):
            columns = self._source.captured_columns(ci["capture_instance"])
            out.append(CaptureInstance(ci["capture_instance"], Lsn(ci["start_lsn"]),
                                       [c["column_name"] for c in columns], [c["data_type"] for c in columns]))
        return out

    def forget_columns(self) -> None:
        """Nothing to forget: the engine asks an instance's columns again whenever the instance
        it finds under a name is another one (a new start LSN)."""
        return None

    def ddl_history(self, capture_instance: str, from_lsn: str, to_lsn: str) -> list[DdlChange]:
        lo, hi = _lsn.normalize(from_lsn), _lsn.normalize(to_lsn)
        return [DdlChange(Lsn(lsn), ts, command) for lsn, ts, command in self._source.ddl_history(capture_instance)
                if lo <= lsn <= hi]

    def captured_columns(self, capture_instance: str) -> str:
        """The instance's captured columns as a Spark DDL list, e.g. ```id` INT, `qty` INT``."""
        return ", ".join(f"`{c['column_name'].replace('`', '``')}` {_core.spark_type(c['data_type'])}"
                         for c in self._source.captured_columns(capture_instance))

    def present_columns(self, capture_instance: str, columns: Sequence[str]) -> list[str]:
        """Those of `columns` the source table has now (matched ignoring case), in the order given."""
        live = {name.casefold() for name in self._source.table_columns(capture_instance)}
        return [c for c in columns if c.casefold() in live] if live else list(columns)

    def key_types(self, capture_instance: str, keys: Sequence[str]) -> list[str | None]:
        """The SQL Server type of each key column among the captured ones; None for one not captured."""
        types = {c["column_name"].casefold(): c["data_type"] for c in self._source.captured_columns(capture_instance)}
        return [types.get(k.casefold()) for k in keys]

    # Keys and rows of a source table (read through its newest capture instance)
    def row_estimate(self, schema: str, table: str) -> int:
        return self._source.row_estimate(self._instance_of(schema, table))

    def key_max(self, schema: str, table: str, keys: Sequence[str]) -> tuple[Any, ...] | None:
        return _key_tuple(self._source.last_key(self._instance_of(schema, table), list(keys)))

    def key_range(self, schema: str, table: str, key: str, lo: int | None = None, hi: int | None = None,
                  isolation: str | None = None) -> tuple[Any, Any]:
        """(MIN, MAX) of a one-column key among keys with lo <= key < hi; (None, None) when none is."""
        self._check_isolation(isolation)
        first, last = self._source.key_range(self._instance_of(schema, table), key, lo, hi)
        return (json.loads(first), json.loads(last))

    def key_tiles(self, schema: str, table: str, keys: Sequence[str], n: int) -> list[tuple[Any, ...]]:
        """The first key of tiles 2 to n of NTILE(n) over the key (the first tile starts open),
        tiled by the table's row estimate."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"n is a positive number of tiles, not {n!r}")
        ci = self._instance_of(schema, table)
        rows = self._source.row_estimate(ci)
        tiles, offset = [], 0
        for i in range(n - 1):
            offset += rows // n + (1 if i < rows % n else 0)
            found = _key_tuple(self._source.key_at(ci, list(keys), "null", offset))
            if found is None:
                break
            tiles.append(found)
        return tiles

    def key_bound(self, schema: str, table: str, keys: Sequence[str], types: Sequence[str] | None,
                  lo: tuple[Any, ...] | None, hi: tuple[Any, ...] | None, n: int,
                  isolation: str | None = None) -> tuple[Any, ...] | None:
        """The key `n` rows into key order from `lo` (inclusive; None: the first key), among
        keys up to `hi` (inclusive; None: no end); None when fewer rows follow. `types` is not
        needed: the engine knows the key's types."""
        self._check_isolation(isolation)
        found = _key_tuple(self._source.key_at(self._instance_of(schema, table), list(keys), _key_json(lo), n))
        if found is not None and hi is not None and found > tuple(hi):
            return None
        return found

    def key_buckets(self, schema: str, table: str, key: str | None, kind: str | None, width: int,
                    lo: int | None = None, hi: int | None = None,
                    isolation: str | None = None) -> list[tuple[int, int, Decimal | None]]:
        """(bucket, rows, sum of keys) per non-empty bucket of an integer or date key among
        keys with lo <= key < hi, bucket b holding keys in [b * width, (b + 1) * width) (a date
        as its day number since 1970-01-01). No key: one bucket 0 of the table's estimated rows
        (sys.sp_spaceused), no sum."""
        self._check_isolation(isolation)
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ConfigError(f"width is a positive number of keys, not {width!r}")
        ci = self._instance_of(schema, table)
        if not key:
            rows = self._source.row_estimate(ci)
            return [(0, rows, None)] if rows else []
        return [(bucket, rows, Decimal(total)) for bucket, rows, total in self._source.key_buckets(ci, key, width, lo, hi)]

    def iter_table(self, schema: str, table: str, columns: Sequence[str], keys: Sequence[str],
                   types: Sequence[str] | None, lo: tuple[Any, ...] | None, hi: tuple[Any, ...] | None,
                   batch_size: int, isolation: str | None = None) -> Iterator[pa.RecordBatch]:
        """The table's current rows with lo <= key < hi, in key order, `columns` only."""
        self._check_isolation(isolation)
        stream = self._source.read_snapshot(self._instance_of(schema, table), list(columns), list(keys),
                                            _key_json(lo), _key_json(hi), batch_size)
        for batch in pa.RecordBatchReader.from_stream(stream):
            yield batch.select(list(range(batch.num_columns - len(columns), batch.num_columns)))

    def iter_changes(self, capture_instance: str, from_lsn: str, to_lsn: str, columns: Sequence[str],
                     include_command_id: bool, batch_size: int) -> Iterator[pa.RecordBatch]:
        """Change rows of [from_lsn, to_lsn] in commit order: _start_lsn, _seqval, _operation,
        _command_id (when asked for), _commit_ts (UTC), then `columns` (empty: all captured)."""
        stream = self._source.read_changes(capture_instance, _lsn.normalize(from_lsn), _lsn.normalize(to_lsn),
                                           list(columns), include_command_id, batch_size)
        for batch in pa.RecordBatchReader.from_stream(stream):
            yield batch.drop_columns(["_capture_instance"])

    # The connection and the clock
    def ping(self, samples: int = 3) -> list[float]:
        """Milliseconds of `samples` round trips; empty for a database with no server (sim, fake)."""
        out = []
        for _ in range(samples):
            ms = self._source.round_trip_ms()
            if ms is None:
                return []
            out.append(ms)
        return out

    def network_wait_ms(self) -> int | None:
        """None: the engine measures its reads by the rows and bytes of each batch, not by the
        server's wait statistics."""
        return None

    def clock(self) -> tuple[str | None, int | None]:
        """(the source clock's zone, its offset from UTC in minutes now)."""
        return (self._source.time_zone, self._source.offset_minutes())

    def refresh_clock(self) -> None:
        self._source.refresh_clock()
        self.timezone = self._source.time_zone

    def set_clock(self, zone: str | None, offset_min: int | None) -> None:
        self._source.set_clock(zone, offset_min)
        self.timezone = self._source.time_zone

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()

    def _instance_of(self, schema: str, table: str) -> str:
        found = self._source.table_instances(schema, table)
        if not found:
            raise ConfigError(f"table {schema}.{table} has no capture instance: it is read through one")
        return found[-1]["capture_instance"]

    def _check_isolation(self, isolation: str | None) -> None:
        if isolation is not None and isolation.casefold() != self._isolation.casefold():
            raise ConfigError(f"isolation {isolation!r}: this client reads with isolationLevel "
                              f"{self._isolation!r}; make a client with isolationLevel={isolation!r} to read so")


def make_client(options: Mapping[str, Any]) -> CdcClient:
    """A client of the database `options` name (source options; captureInstance not needed)."""
    given = copy_options(options)
    set_option(given, "backend", get_option(given, "backend") or "mssql-python")
    return SqlCdcClient._from_options(given)


def snapshot_plan(client: CdcClient, capture_instance: str, source: SourceTable,
                  keys: Sequence[str] | None = None) -> SnapshotExtent:
    """The extent a chunked snapshot plans from: an integer key's MIN, MAX and row estimate, or
    the largest key of any other (None for an empty table)."""
    keys = list(keys or source.keys)
    if isinstance(client, SqlCdcClient):  # the engine's rule, which its chunked snapshots record
        return json.loads(client._source.snapshot_extent(client._instance_of(source.schema, source.table), keys))
    if len(keys) == 1:
        lo, hi = client.key_range(source.schema, source.table, keys[0])
        if _is_int(lo) and _is_int(hi):
            return {"kind": "int", "lo": lo, "hi": hi, "rows": client.row_estimate(source.schema, source.table)}
    top = client.key_max(source.schema, source.table, keys) if keys else None
    return {"kind": "keyset", "max": None if top is None else json.loads(_key_json(top))}


def plan_chunks(client: CdcClient, capture_instance: str, source: SourceTable, extent: SnapshotExtent,
                chunk_rows: int, isolation: str | None = None, keys: Sequence[str] | None = None) -> list[list[Any]]:
    """The [lo, hi) bounds of every chunk of a chunked snapshot, as the engine plans them
    (docs/snapshots.md): an integer key counted per slice of a grid and packed, any other key
    sought every chunk_rows keys. Planned by the engine, so `client` is one make_client made."""
    if not isinstance(client, SqlCdcClient):
        raise ConfigError("plan_chunks plans with the engine: give it a client make_client made, not "
                          f"{type(client).__name__}")
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ConfigError(f"chunk_rows is a positive number of rows, not {chunk_rows!r}")
    client._check_isolation(isolation)
    rows = extent.get("rows") if isinstance(extent, Mapping) and extent.get("kind") == "int" else None
    return [[json.loads(lo), json.loads(hi)] for lo, hi in
            client._source.plan_chunks(capture_instance, list(keys or source.keys), chunk_rows, rows)]


def last_bound(client: CdcClient, capture_instance: str, source: SourceTable, top: object,
               isolation: str | None = None, keys: Sequence[str] | None = None) -> object:
    """The first key after `top` (a JSON bound), as a JSON bound; None when there is none."""
    keys = list(keys or source.keys)
    top_key = _key_tuple(json.dumps(top))
    found = client.key_bound(source.schema, source.table, keys, None, top_key, None, 1, isolation)
    if found is None or found == top_key:
        return None
    return json.loads(_key_json(found))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
