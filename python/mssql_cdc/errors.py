"""Exception classes the engine raises into Python.

The engine's errors carry a stable code and a class name (C++ ``core/errors.h``); the
extension raises the class of that name from this module, and each class's ``code`` is taken
from the extension, so the numbers live in C++ alone. The bases follow the reference library:
bad input is a ``ValueError``, a missing grant a ``PermissionError``.
"""

from mssql_cdc import _core


class MssqlCdcError(Exception):
    """Base of every error the engine raises."""

    code = 0


class ConfigError(MssqlCdcError, ValueError):
    """A bad option, argument or name."""


class DataLossError(MssqlCdcError, RuntimeError):
    """CDC cleanup purged changes the stream had not read."""


class SchemaChangedError(MssqlCdcError, RuntimeError):
    """The source schema changed in a way the target cannot take."""


class PermissionError(MssqlCdcError, PermissionError):  # noqa: A001 (the reference's name)
    """The login lacks a permission; the message gives the GRANT to run."""


class NotFoundError(MssqlCdcError, ValueError):
    """A named capture instance or table does not exist."""


class SourceError(MssqlCdcError, RuntimeError):
    """The source failed to answer: I/O, connection, a file that is not a database."""


class UnsupportedTypeError(MssqlCdcError, ValueError):
    """A SQL Server type with no Arrow/Spark mapping."""


class InternalError(MssqlCdcError, RuntimeError):
    """A broken invariant inside the engine: please report it."""


class ConcurrentModificationError(MssqlCdcError, RuntimeError):
    """Another writer committed a conflicting change to the Delta table first; re-run."""


class CheckpointInUseError(MssqlCdcError, RuntimeError):
    """Another process runs the stream of this checkpoint now; the message names it."""


def _take_codes_from_the_engine() -> None:
    for name, code in _core.error_codes():
        cls = globals().get(name)
        if not (isinstance(cls, type) and issubclass(cls, MssqlCdcError)):
            raise ImportError(f"mssql_cdc.errors has no class for the engine's {name} (code {code})")
        cls.code = code


_take_codes_from_the_engine()


def _says(exc: BaseException, cls: type, marker: str) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, cls) or marker in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def is_data_loss(exc: BaseException) -> bool:
    """Whether `exc` is a DataLossError, or a Spark error that wraps one."""
    return _says(exc, DataLossError, "mssql_cdc.errors.DataLossError:")


def is_schema_changed(exc: BaseException) -> bool:
    """Whether `exc` is a SchemaChangedError, or a Spark error that wraps one."""
    return _says(exc, SchemaChangedError, "mssql_cdc.errors.SchemaChangedError:")
