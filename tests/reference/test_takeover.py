"""A running mssql-cdc-pyspark 0.8.0 job taken over, and given back: 0.8.0 itself (from PyPI, in
its own venv) and this package run the same start_many call in turn on the same bronze, facts
and checkpoints, named in one Hive metastore, both reading one simulated database through `sim
serve` as they read SQL Server (0.8.0 through its mssql-python backend, ours through the engine's reader). After every
run, bronze holds each change of the change tables exactly once, and the facts table one row
per batch of either library, in one schema."""

import json
import sys
from pathlib import Path

import pytest
from reference_runs import run_child, served_shop
from spark_helpers import assert_bronze_equals_change_table, delta, workload

CHILD = Path(__file__).resolve().parent / "takeover_child.py"
TABLES = ["dbo_orders", "dbo_customers"]


def run(python, work, options):
    run_child(python, CHILD, work, json.dumps(options), json.dumps(TABLES), "--names")


@pytest.mark.spark
@pytest.mark.slow
def test_a_reference_job_continues_on_ours_and_back(cli, tmp_path, reference_python):
    """0.8.0, then ours, then 0.8.0 again, with the tables named in a Hive metastore (bronze.<ci>
    and ops.ingestion_facts, managed tables under the warehouse). Tables at paths are taken
    over the same way in test_takeover_snapshots.py."""
    with served_shop(cli, tmp_path, transactions=80, seed=21) as (db, options):
        work = tmp_path / "job"
        bronze = work / "warehouse" / "bronze.db"
        facts_location = work / "warehouse" / "ops.db" / "ingestion_facts"
        batches = 0
        for turn, python in enumerate([reference_python, sys.executable, reference_python]):
            run(python, work, options)
            for ci in TABLES:
                assert_bronze_equals_change_table(db, ci, bronze / ci)
            facts = delta(facts_location).to_pylist()
            assert len(facts) > batches, f"run {turn} wrote no facts row"
            assert all(row["event"] is None and row["rows"] is not None for row in facts[batches:])
            batches = len(facts)
            workload(cli, db, 30, seed=22 + turn)
        # Every batch's facts row, of both libraries, names its stream and the batch it wrote.
        assert {row["app_id"] for row in facts} == {f"{ci}-v1" for ci in TABLES}
        for ci in TABLES:
            ids = sorted(row["batch_id"] for row in facts if row["app_id"] == f"{ci}-v1")
            assert ids == list(range(len(ids))), f"{ci}: batch ids {ids}"
