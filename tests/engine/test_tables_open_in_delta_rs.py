"""Every Delta table the engine's C++ tests write (bronze, facts, control) opens in delta-rs,
with the rows and columns the engine's own reader sees.

The GoogleTest binary runs with its temporary directories kept (MSSQL_CDC_KEEP_TEST_DIRS), and
each table found under them is read by both."""

import json
import os
import subprocess
from pathlib import Path

import deltalake
import pyarrow as pa

from mssql_cdc import _core

# Not imported from conftest: with several test folders, "conftest" may name another one's.
ROOT = Path(__file__).resolve().parents[2]


def deltars_rows(table):
    """The table as delta-rs reads it. A table with column mapping goes through its query engine:
    to_pyarrow_table() (deltalake 1.6) refuses the columnMapping reader feature, and reads a
    mapped column of a reader-version-2 table as NULLs."""
    delta_table = deltalake.DeltaTable(str(table))
    protocol = delta_table.protocol()
    if protocol.min_reader_version == 2 or "columnMapping" in (protocol.reader_features or []):
        query = deltalake.QueryBuilder().register("t", delta_table).execute("SELECT * FROM t")
        return pa.table(query.read_all())
    return delta_table.to_pyarrow_table()


def failed_tests(report):
    """Each failed test of a GoogleTest JSON report with its failure messages; "" without one."""
    if not report.exists():
        return ""
    failed = []
    for suite in json.loads(report.read_text()).get("testsuites", []):
        for test in suite.get("testsuite", []):
            for failure in test.get("failures", []):
                failed.append(f"{suite['name']}.{test['name']}: {failure.get('failure', '')[:1500]}")
    return "\n".join(failed)


def test_every_table_the_engine_tests_write_opens_in_delta_rs(tmp_path):
    binary = ROOT / "build" / "tests" / "engine_tests"
    env = dict(os.environ, TMPDIR=str(tmp_path), MSSQL_CDC_KEEP_TEST_DIRS="1")
    report = tmp_path / "gtest.json"
    result = subprocess.run([str(binary), "--gtest_brief=1", f"--gtest_output=json:{report}"], env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, failed_tests(report) or result.stdout[-4000:]

    tables = sorted({log.parent for log in tmp_path.rglob("_delta_log")})
    assert len(tables) >= 50, f"only {len(tables)} tables found"
    kinds = set()
    for table in tables:
        ours = pa.RecordBatchReader.from_stream(_core.delta_read(str(table))).read_all()
        theirs = deltars_rows(table)
        assert theirs.num_rows == ours.num_rows, table
        assert theirs.schema.names == ours.schema.names, table
        names = set(ours.schema.names)
        kinds.add("bronze" if "_batch_id" in names else "facts" if "event" in names
                  else "control" if "finalized_until" in names else "other")
    assert {"bronze", "facts", "control"} <= kinds
