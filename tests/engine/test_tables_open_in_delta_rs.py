"""Every Delta table the engine's C++ tests write (bronze, facts, control) opens in delta-rs,
with the rows and columns the engine's own reader sees.

The GoogleTest binary runs with its temporary directories kept (MSSQL_CDC_KEEP_TEST_DIRS), and
each table found under them is read by both."""

import os
import subprocess
from pathlib import Path

import deltalake
import pyarrow as pa

from mssql_cdc import _core

# Not imported from conftest: with several test folders, "conftest" may name another one's.
ROOT = Path(__file__).resolve().parents[2]


def test_every_table_the_engine_tests_write_opens_in_delta_rs(tmp_path):
    binary = ROOT / "build" / "tests" / "engine_tests"
    env = dict(os.environ, TMPDIR=str(tmp_path), MSSQL_CDC_KEEP_TEST_DIRS="1")
    result = subprocess.run([str(binary), "--gtest_brief=1"], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:]

    tables = sorted({log.parent for log in tmp_path.rglob("_delta_log")})
    assert len(tables) >= 50, f"only {len(tables)} tables found"
    kinds = set()
    for table in tables:
        ours = pa.RecordBatchReader.from_stream(_core.delta_read(str(table))).read_all()
        theirs = deltalake.DeltaTable(str(table)).to_pyarrow_table()
        assert theirs.num_rows == ours.num_rows, table
        assert theirs.schema.names == ours.schema.names, table
        names = set(ours.schema.names)
        kinds.add("bronze" if "_batch_id" in names else "facts" if "event" in names
                  else "control" if "finalized_until" in names else "other")
    assert {"bronze", "facts", "control"} <= kinds
