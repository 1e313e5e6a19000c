"""The public API of the reference library 0.8.0 (docs/spark.md), name by name:
every name whose feature exists here is importable, and the details users' code depends on."""

import importlib
import inspect
import logging

import pytest

# Every public name of mssql-cdc-pyspark 0.8.0: its __all__ and its public submodules.
REFERENCE = {
    "mssql_cdc": [
        "ApplyResult", "Backend", "BackfillState", "BackfillStatus", "BatchDetail", "CdcClient", "DataLossError",
        "DataSkippedDetail", "Freshness", "Granularity", "HAS_ADMISSION_CONTROL", "Isolation", "Lsn",
        "MssqlCdcDataSource", "OPERATIONS", "Offset", "OnDataLoss", "ReconcileResult", "SchemaChangedError",
        "SnapshotChunkDetail", "SnapshotCompletionDetail", "SnapshotMode", "SnapshotOpenDetail", "SnapshotPlanDetail",
        "SourceOptions", "SparkSessionLike", "StreamingQueryLike", "WaveMetadata", "apply_changes", "await_all",
        "is_data_loss", "is_schema_changed", "make_client", "reconcile", "register", "start_many", "stop_all",
        "stream",
    ],
    "mssql_cdc.finalization": [
        "FinalizationListener", "advance", "candidate", "end_offset_from_progress", "ensure_control_table",
        "finalized_until", "freshness", "is_final", "track", "truncate",
    ],
    "mssql_cdc.sink": ["delta_sink"],
    "mssql_cdc.spark": ["available_cores", "get_spark"],
    "mssql_cdc.types": [
        "ApplyResult", "BackfillState", "BackfillStatus", "Freshness", "Granularity", "Isolation", "Offset",
        "OnDataLoss", "ReconcileResult", "SnapshotMode", "SparkSessionLike", "StreamingQueryLike",
    ],
    "mssql_cdc.payloads": [
        "BatchDetail", "DataSkippedDetail", "IntExtent", "KeysetExtent", "SnapshotChunkDetail",
        "SnapshotCompletionDetail", "SnapshotExtent", "SnapshotKind", "SnapshotMode", "SnapshotOpenDetail",
        "SnapshotPlanDetail", "WaveChunk", "WaveMetadata",
    ],
    "mssql_cdc.lsn": ["LSN_BYTES", "Lsn", "ZERO_LSN", "from_int", "normalize", "to_int"],
}

# Names whose feature is not built yet, by feature; they arrive with it. This list only shrinks.
SNAPSHOTS = {"BackfillState", "BackfillStatus", "SnapshotChunkDetail", "SnapshotCompletionDetail",
             "SnapshotOpenDetail", "SnapshotPlanDetail", "WaveMetadata", "IntExtent", "KeysetExtent",
             "SnapshotExtent", "SnapshotKind", "WaveChunk"}
SILVER_AND_RECONCILE = {"Freshness", "freshness"}
# The reference's Python seams for reading SQL Server; here the engine reads it in C++, chosen by
# the `backend` option.
PYTHON_READERS = {"Backend", "CdcClient", "make_client"}
EXCUSED = SNAPSHOTS | SILVER_AND_RECONCILE | PYTHON_READERS


def test_every_public_name_of_the_reference_is_here_but_the_excused():
    missing = []
    for module_name, names in REFERENCE.items():
        module = importlib.import_module(module_name)
        for name in names:
            if name not in EXCUSED and not hasattr(module, name):
                missing.append(f"{module_name}.{name}")
    assert missing == []


def test_an_excused_name_that_arrived_leaves_the_list():
    arrived = sorted({f"{m}.{n}" for m, names in REFERENCE.items() for n in names
                      if n in EXCUSED and hasattr(importlib.import_module(m), n)})
    assert arrived == [], "remove these from EXCUSED"


def test_the_top_level_all_names_only_what_exists():
    import mssql_cdc

    for name in mssql_cdc.__all__:
        assert getattr(mssql_cdc, name) is not None, name


def test_types_are_plain_values_at_run_time():
    import typing

    from mssql_cdc import OPERATIONS, Offset, SourceOptions, _core, lsn, payloads, types

    assert OPERATIONS == {0: "snapshot", 1: "delete", 2: "insert", 3: "update_before", 4: "update_after"}
    assert Offset(lsn="0x" + "0" * 20, commit_ts="") == {"lsn": "0x" + "0" * 20, "commit_ts": ""}
    assert set(SourceOptions.__annotations__) == set(_core.source_option_names())
    assert typing.get_args(types.Granularity) == ("minute", "hour", "day")
    assert typing.get_args(types.OnDataLoss) == ("fail", "resnapshot")
    assert set(payloads.DataSkippedDetail.__annotations__) == {"from", "to", "certain", "reason"}
    assert lsn.ZERO_LSN == "0x" + "0" * 20 and lsn.LSN_BYTES == 10


@pytest.mark.parametrize("text, canonical", [
    ("0x0000002A000001000001", "0x0000002A000001000001"),
    ("0000002a000001000001", "0x0000002A000001000001"),
    ("0x2a", "0x0000000000000000002A"),
    ("2A", "0x0000000000000000002A"),
    ("0X0000002A000001000001", "0x0000002A000001000001"),
])
def test_lsn_strings_in_every_accepted_form(text, canonical):
    from mssql_cdc import lsn

    assert lsn.normalize(text) == canonical
    assert lsn.from_int(lsn.to_int(text)) == canonical


@pytest.mark.parametrize("bad", ["", "0x", "0xZZ", "0x" + "1" * 21, 42, None])
def test_lsn_refuses_what_is_not_an_lsn(bad):
    from mssql_cdc import lsn

    with pytest.raises(ValueError):
        lsn.normalize(bad)


@pytest.mark.parametrize("bad", [-1, 1 << 80, True, 1.5])
def test_lsn_from_int_refuses_what_is_not_an_80_bit_integer(bad):
    from mssql_cdc import lsn

    with pytest.raises(ValueError):
        lsn.from_int(bad)


def test_options_modes_and_flags_are_keyword_only():
    from mssql_cdc import finalization, pipeline, sink

    def keyword_only(function, names):
        parameters = inspect.signature(function).parameters
        return all(parameters[n].kind is inspect.Parameter.KEYWORD_ONLY for n in names)

    assert keyword_only(sink.delta_sink, ["metrics_path"])
    assert keyword_only(finalization.advance, ["granularity"])
    assert keyword_only(finalization.track, ["granularity"])
    assert keyword_only(finalization.candidate, ["granularity"])
    assert keyword_only(finalization.end_offset_from_progress, ["source_index"])
    assert keyword_only(pipeline.CdcStream.to_delta, ["trigger", "query_name", "bootstrap", "on_data_loss",
                                                      "resnapshot_interval_days", "snapshot_on_switch", "snapshot"])
    with pytest.raises(TypeError):
        sink.delta_sink("/lake/b", "a", "/lake/f", "/lake/metrics")
    with pytest.raises(TypeError):
        finalization.candidate({"lsn": "0x" + "0" * 20, "commit_ts": "2026-01-01T00:00:00.000"}, "day")


def test_a_wrong_mode_names_the_allowed_values():
    from mssql_cdc import finalization

    with pytest.raises(ValueError, match="'minute', 'hour' or 'day'"):
        finalization.truncate(__import__("datetime").datetime(2026, 1, 1), "fortnight")
