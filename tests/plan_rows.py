"""A chunked snapshot's plan as the plans table beside bronze keeps it: one row per snapshot
event (snapshot, event, detail), the plan whole in the `snapshot_plan` row of its snapshot."""

import json


def planned_chunks(rows, snapshot):
    """[(chunk, lo, hi)] of the plan of snapshot `snapshot` (its LSN) among a plans table's
    rows, in key order, the bounds as JSON values (None for an open end)."""
    plans = [json.loads(r["detail"]) for r in rows if r["snapshot"] == snapshot and r["event"] == "snapshot_plan"]
    assert len(plans) == 1, f"{len(plans)} plans of snapshot {snapshot}"
    return [(chunk, lo, hi) for chunk, (lo, hi) in enumerate(plans[0]["chunks"])]
