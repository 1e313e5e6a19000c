"""The JSON payloads of facts rows (the ``detail`` column), as TypedDicts; plain dicts at run time,
their keys only ever added."""

from __future__ import annotations

from typing import TypedDict

from mssql_cdc.types import SnapshotMode  # noqa: F401 (the reference's payloads export it too)


class BatchDetail(TypedDict, total=False):
    """A micro-batch row's detail: present only when the batch has warnings."""

    warnings: list[str]


# A data_skipped row's detail: the offsets between which changes were lost, whether that is
# certain, and (when a task found it rather than the planner) why. "from" is a keyword.
DataSkippedDetail = TypedDict("DataSkippedDetail", {"from": str, "to": str, "certain": bool, "reason": str},
                              total=False)
