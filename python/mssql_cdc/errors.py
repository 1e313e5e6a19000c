"""Exception classes the engine raises into Python.

The engine's errors carry a stable code and a class name (C++ ``core/errors.h``); the
extension raises the class of that name from this module. The bases follow the reference
library: bad input is a ``ValueError``, a missing grant a ``PermissionError``.
"""


class MssqlCdcError(Exception):
    """Base of every error the engine raises."""

    code = 0


class ConfigError(MssqlCdcError, ValueError):
    """A bad option, argument or name."""

    code = 1


class DataLossError(MssqlCdcError, RuntimeError):
    """CDC cleanup purged changes the stream had not read."""

    code = 2


class SchemaChangedError(MssqlCdcError, RuntimeError):
    """The source schema changed in a way the target cannot take."""

    code = 3


class PermissionError(MssqlCdcError, PermissionError):  # noqa: A001 (the reference's name)
    """The login lacks a permission; the message gives the GRANT to run."""

    code = 4


class NotFoundError(MssqlCdcError, ValueError):
    """A named capture instance or table does not exist."""

    code = 5


class SourceError(MssqlCdcError, RuntimeError):
    """The source failed to answer: I/O, connection, a file that is not a database."""

    code = 6


class UnsupportedTypeError(MssqlCdcError, ValueError):
    """A SQL Server type with no Arrow/Spark mapping."""

    code = 7


class InternalError(MssqlCdcError, RuntimeError):
    """A broken invariant inside the engine: please report it."""

    code = 8


class ConcurrentModificationError(MssqlCdcError, RuntimeError):
    """Another writer committed a conflicting change to the Delta table first; re-run."""

    code = 9
