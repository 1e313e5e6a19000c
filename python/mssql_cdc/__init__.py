"""mssql_cdc: SQL Server Change Data Capture into Delta Lake, on a C++ engine."""

import pyarrow  # noqa: F401  (loads the Arrow C++ libraries the extension links against)

from mssql_cdc import _core
from mssql_cdc.errors import (
    ConfigError,
    DataLossError,
    MssqlCdcError,
    NotFoundError,
    PermissionError,
    SchemaChangedError,
    SourceError,
    UnsupportedTypeError,
)

__version__ = _core.__version__

__all__ = [
    "ConfigError",
    "DataLossError",
    "MssqlCdcError",
    "NotFoundError",
    "PermissionError",
    "SchemaChangedError",
    "SourceError",
    "UnsupportedTypeError",
    "__version__",
]
