"""The JSON payloads of facts rows (the ``detail`` column), as TypedDicts; plain dicts at run time,
their keys only ever added."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from mssql_cdc.types import SnapshotMode  # noqa: F401 (the reference's payloads export it too)

# Why a snapshot was taken: the first one of a target, or one after changes were lost.
SnapshotKind = Literal["bootstrap", "resnapshot"]


class BatchDetail(TypedDict):
    """A micro-batch row's detail, with the batch's warnings. The engine logs a batch's
    warnings instead; its micro-batch rows' detail says which readers read the change rows,
    {"readers": [...]}, and is NULL for the sim backend."""

    warnings: list[str]


# A data_skipped row's detail: the offsets between which changes were lost, whether that is
# certain, and (when a task found it rather than the planner) why. "from" is a keyword, hence
# the functional form; "reason" is the one key a row may lack.
_DataSkippedRequired = TypedDict("_DataSkippedRequired", {"from": str, "to": str, "certain": bool})


class DataSkippedDetail(_DataSkippedRequired, total=False):
    reason: str


class SnapshotCompletionDetail(TypedDict):
    """The detail of the row that completes a chunked snapshot (its 'bootstrap' or 'resnapshot'
    row): the snapshot's LSN, its chunks and rows, and the highest commit LSN its waves saw."""

    snapshot: str
    chunks: int
    rows: int
    last_lsn: str


class _SnapshotChunkRequired(TypedDict):
    snapshot: str
    wave: int
    chunk: int
    last: bool


class SnapshotChunkDetail(_SnapshotChunkRequired, total=False):
    """A chunk of a chunked snapshot that reached bronze: its snapshot's LSN, the wave that read
    it, its number in the plan and whether it completed the snapshot. The facts row leaves the
    chunk's key bounds out; the row of a plans table kept as mssql-cdc-pyspark 0.8.0 keeps one
    has them too (``lo`` included, ``hi`` excluded, JSON values; None for an open end)."""

    lo: Any
    hi: Any


class IntExtent(TypedDict):
    """The extent of a one-column integer key (mssql_cdc.client.snapshot_plan): its smallest and
    largest key and the table's estimated rows."""

    kind: Literal["int"]
    lo: int
    hi: int
    rows: int


class KeysetExtent(TypedDict):
    """The extent of any other key: its largest key as a JSON bound (None for an empty table)."""

    kind: Literal["keyset"]
    max: Any


SnapshotExtent = IntExtent | KeysetExtent
