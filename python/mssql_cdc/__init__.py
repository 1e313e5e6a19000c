"""mssql_cdc: SQL Server Change Data Capture into Delta Lake, on a C++ engine.

The error classes, the types (``mssql_cdc.types``, ``mssql_cdc.payloads``), LSNs
(``mssql_cdc.lsn``) and ``OPERATIONS`` load with the package; the Spark API (``stream``,
``register``, ``start_many``, ``await_all``, ``stop_all``, ``is_data_loss``,
``is_schema_changed``, ``MssqlCdcDataSource``, ``MssqlCdcSnapshotDataSource``,
``HAS_ADMISSION_CONTROL`` and the submodules
``finalization``, ``sink`` and ``spark``) loads PySpark on first use, so the package imports
without it.
"""

import importlib
import importlib.util
import sys
import types as _stdlib_types
from typing import Any

import pyarrow  # noqa: F401  (loads the Arrow C++ libraries the extension links against)
import pyarrow.fs  # noqa: F401  (shuts Arrow's S3 support down at exit, after the engine's S3 tables)

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

from mssql_cdc.lsn import Lsn
from mssql_cdc.payloads import BatchDetail, DataSkippedDetail, SnapshotChunkDetail, SnapshotCompletionDetail
from mssql_cdc.types import (
    ApplyResult,
    BackfillState,
    BackfillStatus,
    Freshness,
    Granularity,
    Isolation,
    Offset,
    OnDataLoss,
    ReconcileResult,
    SnapshotMode,
    SourceOptions,
    SparkSessionLike,
    StreamingQueryLike,
)

__version__ = _core.__version__

# Microsoft ODBC Driver 18 from the pinned dependency mssql-python-odbc: used by path when a
# connection string names no driver, so that no odbcinst.ini entry is needed.
if importlib.util.find_spec("mssql_python_odbc") is not None:
    import mssql_python_odbc

    _core.use_bundled_odbc_driver(mssql_python_odbc.get_libs_dir())

# The __$operation codes of SQL Server's change tables, and 0 for a snapshot row, as the engine
# names them (core/operations.h).
OPERATIONS = dict(_core.operations())

# name -> module that defines it; imported on first access (PEP 562).
_SPARK_API = {
    "MssqlCdcDataSource": "mssql_cdc.source",
    "MssqlCdcSnapshotDataSource": "mssql_cdc.snapshot_source",
    "HAS_ADMISSION_CONTROL": "mssql_cdc.source",
    "register": "mssql_cdc.source",
    "stream": "mssql_cdc.pipeline",
    "CdcStream": "mssql_cdc.pipeline",
    "start_many": "mssql_cdc.fanout",
    "await_all": "mssql_cdc.fanout",
    "stop_all": "mssql_cdc.fanout",
    "is_data_loss": "mssql_cdc.errors",
    "is_schema_changed": "mssql_cdc.errors",
    "apply_changes": "mssql_cdc.silver",
    "reconcile": "mssql_cdc.reconcile",
    "Backend": "mssql_cdc.client",
    "CdcClient": "mssql_cdc.client",
    "make_client": "mssql_cdc.client",
}
_SPARK_MODULES = ("finalization", "sink", "spark", "source", "snapshot_source", "seed",
                  "pipeline", "fanout", "silver")


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if e.name is not None and e.name.split(".")[0] == "pyspark":
            raise ImportError(f"mssql_cdc's Spark API needs PySpark 4.2 or later ({e}); run it on a Spark "
                              "platform or install pyspark") from e
        raise


class _Package(_stdlib_types.ModuleType):
    """The package's module type: importing the submodule ``reconcile`` binds the package's
    attribute of that name to the function, not the module, as the reference library does, so
    that ``mssql_cdc.reconcile(...)`` works whatever was imported first."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FUNCTIONS_NAMED_AS_MODULES and isinstance(value, _stdlib_types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


_FUNCTIONS_NAMED_AS_MODULES = ("reconcile",)
sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name in _SPARK_API:
        return getattr(_import(_SPARK_API[name]), name)
    if name in _SPARK_MODULES:
        return _import(f"mssql_cdc.{name}")
    raise AttributeError(f"module 'mssql_cdc' has no attribute {name!r}")


__all__ = [
    "ApplyResult",
    "Backend",
    "BackfillState",
    "BackfillStatus",
    "BatchDetail",
    "CdcClient",
    "CdcStream",
    "ConfigError",
    "DataLossError",
    "DataSkippedDetail",
    "Freshness",
    "Granularity",
    "HAS_ADMISSION_CONTROL",
    "Isolation",
    "Lsn",
    "MssqlCdcDataSource",
    "MssqlCdcError",
    "MssqlCdcSnapshotDataSource",
    "NotFoundError",
    "OPERATIONS",
    "Offset",
    "OnDataLoss",
    "PermissionError",
    "ReconcileResult",
    "SchemaChangedError",
    "SnapshotChunkDetail",
    "SnapshotCompletionDetail",
    "SnapshotMode",
    "SourceError",
    "SourceOptions",
    "SparkSessionLike",
    "StreamingQueryLike",
    "UnsupportedTypeError",
    "__version__",
    "apply_changes",
    "await_all",
    "finalization",
    "is_data_loss",
    "is_schema_changed",
    "make_client",
    "reconcile",
    "register",
    "start_many",
    "stop_all",
    "stream",
]
