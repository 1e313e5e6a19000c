"""What the source's planner tells the sink about a micro-batch, through files.

Spark plans a batch in one Python process (the source's driver-side reader) and runs
``foreachBatch`` in another, and hands the sink nothing but the rows and the batch id. The
reader therefore writes one small JSON file per planned batch into the stream's metrics
directory: the batch's start and end offsets (as the engine gave them) and the range cleanup
skipped, if any. The sink reads the newest one, and deletes it and any older ones once the
batch's facts are committed.

Promises: a file appears whole (written to a temporary name, then renamed); a replanned batch
(Spark replays an uncommitted batch with the same offsets) rewrites the same file; the newest
file is the one with the highest end LSN (LSNs are fixed-width hex, so text order is LSN
order). A directory that cannot be written is reported as a warning, never as a failure.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass

log = logging.getLogger("mssql_cdc")

_PREFIX = "batch-"
_SUFFIX = ".json"


@dataclass(frozen=True)
class PlannedBatch:
    start: str  # offset JSON
    end: str  # offset JSON
    skipped: tuple[str, str] | None  # (first lost LSN, min LSN) when cleanup purged changes
    path: str

    @property
    def end_lsn(self) -> str:
        return json.loads(self.end)["lsn"]


def write(directory: str, start: str, end: str, skipped: tuple[str, str] | None) -> None:
    """Records a planned batch (offsets as the engine's JSON text)."""
    end_lsn = json.loads(end)["lsn"]
    doc = {"start": start, "end": end, "skipped": list(skipped) if skipped else None}
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
        os.replace(tmp, os.path.join(directory, f"{_PREFIX}{end_lsn}{_SUFFIX}"))
    except OSError as e:
        log.warning("mssql_cdc: could not record the planned batch in %s: %s", directory, e)


def newest(directory: str) -> PlannedBatch | None:
    """The planned batch with the highest end LSN, or None when there is none."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith(_PREFIX) and n.endswith(_SUFFIX)]
    except FileNotFoundError:
        return None
    if not names:
        return None
    path = os.path.join(directory, max(names))
    with open(path) as f:
        doc = json.load(f)
    skipped = tuple(doc["skipped"]) if doc.get("skipped") else None
    return PlannedBatch(start=doc["start"], end=doc["end"], skipped=skipped, path=path)


def remove_through(directory: str, end_lsn: str) -> None:
    """Deletes the files of batches ending at or before `end_lsn`."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(_PREFIX) and name.endswith(_SUFFIX):
            if name[len(_PREFIX) : -len(_SUFFIX)] <= end_lsn:
                try:
                    os.remove(os.path.join(directory, name))
                except FileNotFoundError:
                    pass
