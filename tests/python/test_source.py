"""Change reads from Python: the engine's record batches reach pyarrow without a copy."""

import json

import pyarrow as pa
import pytest

import mssql_cdc
from mssql_cdc import _core


@pytest.fixture
def sales(cli, tmp_path):
    db = tmp_path / "sales.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-11-01 01:57:00",
        "--time-zone", "Pacific Standard Time")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 1, "--transactions", 300, "--seed", 3)
    return db  # the workload runs through the fall-back at 02:00 PDT -> 01:00 PST


def test_reads_every_change_in_order_with_utc_commit_times(cli, sales):
    expected = {
        ci["name"]: ci["change_rows"]
        for ci in json.loads(cli("sim", "info", "--db", sales, "--json").stdout)["capture_instances"]
    }
    source = _core.open_sim_source(str(sales))
    assert source.time_zone == "Pacific Standard Time"
    for ci in source.capture_instances():
        name = ci["capture_instance"]
        start = _core.lsn_decrement(source.min_lsn(name))
        reader = pa.RecordBatchReader.from_stream(
            source.read_changes(name, _core.lsn_increment(start), source.max_lsn(), batch_rows=50)
        )
        table = reader.read_all()
        assert table.num_rows == expected[name]
        assert table.schema.names[:6] == [
            "_capture_instance", "_start_lsn", "_seqval", "_operation", "_command_id", "_commit_ts",
        ]
        keys = list(zip(*(table.column(c).to_pylist() for c in
                          ("_start_lsn", "_command_id", "_seqval", "_operation"))))
        assert keys == sorted(keys)
        commit_ts = table.column("_commit_ts").to_pylist()
        assert commit_ts == sorted(commit_ts), "UTC commit times follow commit order across DST"


def test_unknown_capture_instance_names_the_ones_there_are(sales):
    source = _core.open_sim_source(str(sales))
    with pytest.raises(mssql_cdc.NotFoundError, match="dbo_customers"):
        source.read_changes("dbo_nope", "0x0", "0xFF")


def test_not_a_sim_file(tmp_path):
    path = tmp_path / "x.sim"
    with pytest.raises(mssql_cdc.SourceError, match="sim create"):
        _core.open_sim_source(str(path))
    assert not path.exists()
