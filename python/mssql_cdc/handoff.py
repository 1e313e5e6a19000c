"""What the source tells the sink about a micro-batch, through files in its metrics directory.

Spark plans a batch in one Python process (the source's driver-side reader), reads its ranges
in others (the tasks) and runs ``foreachBatch`` in yet another, and hands the sink nothing but
the rows and the batch id. So each leaves files in the stream's metrics directory
(``mssql_cdc.metrics_dir``), which the sink reads and deletes once the batch's facts are
committed:

- the planner, one ``batch-<end LSN>.json`` per planned batch: its start and end offsets (as
  the engine gave them), the range cleanup skipped, if any, and its schema events (DDL, a newer
  capture instance taking over; ``_core.Feed.schema_events``); for a batch that reads no range,
  also the batch's metrics (nothing read, its end measured at planning);
- each task, one ``range-<to LSN>-<from LSN>.json``: what reading the range measured
  (``_core.RangeRead.metrics_json``), the batch's last range with the batch's end measures.

Promises: a replanned batch (Spark replays an uncommitted batch with the same offsets) or a
retried task rewrites the same file; the newest planned batch is the one with the highest end
LSN (LSNs are fixed-width hex, so text order is LSN order). Metrics are best effort: a file
that cannot be written is a warning, never a failure of the read.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from mssql_cdc.metrics_dir import MetricsDir

log = logging.getLogger("mssql_cdc")

_BATCH = "batch-"
_RANGE = "range-"
_SUFFIX = ".json"


@dataclass(frozen=True)
class PlannedBatch:
    start: str  # offset JSON
    end: str  # offset JSON
    skipped: tuple[str, str] | None  # (first lost LSN, min LSN) when cleanup purged changes
    metrics: str | None  # range metrics JSON of a batch that reads no range
    events: str = "[]"  # schema events JSON (_core.Feed.schema_events)

    @property
    def end_lsn(self) -> str:
        return json.loads(self.end)["lsn"]


def write(directory: MetricsDir, start: str, end: str, skipped: tuple[str, str] | None,
          metrics: str | None = None, events: str = "[]") -> None:
    """Records a planned batch (offsets as the engine's JSON text)."""
    end_lsn = json.loads(end)["lsn"]
    doc = {"start": start, "end": end, "skipped": list(skipped) if skipped else None, "metrics": metrics,
           "events": events}
    try:
        directory.write(f"{_BATCH}{end_lsn}{_SUFFIX}", json.dumps(doc))
    except Exception as e:  # noqa: BLE001 (best effort: the facts then lack the batch's offsets)
        log.warning("mssql_cdc: could not record the planned batch in %s: %s", directory.location, e)


def write_range(directory: MetricsDir, metrics_json: str) -> None:
    """Records what reading one range measured; a failure is logged, never raised."""
    doc = json.loads(metrics_json)
    name = f"{_RANGE}{doc['to_lsn']}-{doc['from_lsn']}{_SUFFIX}"
    try:
        directory.write(name, metrics_json)
    except Exception as e:  # noqa: BLE001 (best effort: a metrics failure never fails a read)
        log.warning("mssql_cdc: could not write the metrics of range %s..%s in %s: %s",
                    doc["from_lsn"], doc["to_lsn"], directory.location, e)


def newest(directory: MetricsDir) -> PlannedBatch | None:
    """The planned batch with the highest end LSN, or None when there is none."""
    names = directory.names(_BATCH)
    if not names:
        return None
    doc = json.loads(directory.read(names[-1]))
    skipped = tuple(doc["skipped"]) if doc.get("skipped") else None
    return PlannedBatch(start=doc["start"], end=doc["end"], skipped=skipped, metrics=doc.get("metrics"),
                        events=doc.get("events") or "[]")


def range_metrics(directory: MetricsDir, end_lsn: str) -> list[str]:
    """The range metrics documents of ranges ending at or before `end_lsn`."""
    found = []
    for name in directory.names(_RANGE):
        if _to_lsn(name) <= end_lsn:
            try:
                found.append(directory.read(name))
            except FileNotFoundError:
                pass  # deleted by an earlier batch's sink meanwhile
    return found


def remove_through(directory: MetricsDir, end_lsn: str) -> None:
    """Deletes the files of batches and ranges ending at or before `end_lsn`."""
    for name in directory.names(_BATCH):
        if name[len(_BATCH):-len(_SUFFIX)] <= end_lsn:
            directory.delete(name)
    for name in directory.names(_RANGE):
        if _to_lsn(name) <= end_lsn:
            directory.delete(name)


def _to_lsn(range_name: str) -> str:
    return range_name[len(_RANGE):].split("-", 1)[0]
