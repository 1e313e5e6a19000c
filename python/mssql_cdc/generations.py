"""Re-snapshot generations on Spark (``to_delta(on_data_loss="resnapshot")``), decided in the
engine (engine/generations.h). Generation n runs with the Spark checkpoint
``<checkpoint>/_generations/<n>`` (n = 0: the checkpoint itself) and the sink id
``<app_id>.g<n>``. Before each start this module reads where Spark's checkpoint of the current
generation stands (the end offset of its highest committed batch, line 3 of ``offsets/<n>``);
when cleanup purged the changes after it, the engine records the recovery, the table is
snapshotted again (full, or a chunked snapshot opened) into bronze, and generation n + 1 starts at
the new snapshot. The checkpoint must be a local or Volume path that this process and Spark see
alike.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pyspark.sql import functions as F

from mssql_cdc import _core, backfill, tables
from mssql_cdc import bootstrap as bootstrap_snapshot
from mssql_cdc.errors import ConfigError
from mssql_cdc.spark_checkpoint import SparkCheckpoint

log = logging.getLogger("mssql_cdc")


def preflight(spark: Any, options: Mapping[str, str], checkpoint: str, app_id: str, facts: tables.TableArg,
              target: str, interval_days: float) -> tuple[dict, dict | None]:
    """(the current generation, the recovery to make or None)."""
    current = json.loads(_core.current_generation(checkpoint, app_id))
    last = SparkCheckpoint(spark, current["checkpoint"]).last_processed()
    if last is None:
        if tables.check(spark, facts, "facts") and tables.read(spark, facts).where(
                (F.col("app_id") == current["app_id"]) & F.col("event").isNull()).limit(1).count():
            raise ConfigError(
                f"to_delta: the facts table holds batches of stream {current['app_id']!r}, but this "
                f"process finds no committed batch in its checkpoint {current['checkpoint']!r}: Spark and "
                f"this process may see different directories (a path without a scheme is DBFS for Spark "
                f"on Databricks), or the checkpoint was deleted; give a local or Volume path both see, "
                f"or start over with a new app_id")
        return current, None
    recovery = _core.resnapshot_preflight(dict(options), checkpoint, app_id, last, interval_days)
    if recovery is None:
        return current, None
    recovery = json.loads(recovery)
    log.warning("mssql_cdc: CDC cleanup purged the changes of %s after %s (they resume at %s); "
                "on_data_loss=\"resnapshot\": snapshotting the table again as generation %d",
                target, recovery["last_lsn"], recovery["min_lsn"], recovery["generation"])
    return recovery, recovery


def resnapshot(spark: Any, options: Mapping[str, str], bronze: tables.TableArg, facts: tables.TableArg,
               recovery: dict, mode: str, state_dir: str, output_schema_json: str) -> str:
    """Takes the re-snapshot of `recovery` (full, or a chunked one opened for backfill()) and
    commits the new generation; the LSN it starts after."""
    base = recovery["checkpoint"].rsplit("/_generations/", 1)[0]
    try:
        if mode == "chunked":
            writer = backfill.SparkBackfillTables(spark, options, bronze, facts, output_schema_json)
            offset = _core.open_chunked(dict(options), writer, bronze.text, recovery["app_id"], facts.text,
                                        recovery["checkpoint"], json.dumps(recovery))
        else:
            writer = bootstrap_snapshot.SparkBootstrapTables(spark, options, bronze, facts, output_schema_json)
            offset = _core.bootstrap_into(dict(options), writer, bronze.text, recovery["app_id"], state_dir,
                                          facts.text, json.dumps(recovery))
    except Exception as error:
        if type(error).__name__ == "DataLossError":
            _core.resnapshot_failed(base)
        raise
    _core.resnapshot_done(base, recovery["generation"], offset)
    lsn = json.loads(offset)["lsn"]
    log.info("mssql_cdc: generation %d of %s starts at the re-snapshot's LSN %s", recovery["generation"],
             bronze.text, lsn)
    return lsn
