"""The details of the public API that users' code depends on. Which names exist, with which
signatures, is compared with the reference library 0.8.0 itself by tests/reference/test_api.py."""

import inspect

import pytest


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


def test_an_lsn_as_the_bytes_a_driver_returns():
    from mssql_cdc import lsn

    assert lsn.normalize(bytes(range(10))) == "0x00010203040506070809"
    assert lsn.normalize(bytearray(10)) == lsn.ZERO_LSN


@pytest.mark.parametrize("bad", ["", "0x", "0xZZ", "0x" + "1" * 21, 42, None, b"", b"\x01", bytes(11)])
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


def test_a_streams_options_can_be_replaced_by_a_mapping_only():
    from mssql_cdc import ConfigError
    from mssql_cdc.pipeline import CdcStream

    cdc = CdcStream(None, {"captureInstance": "dbo_orders"})
    cdc.options = {"captureInstance": "dbo_customers", "maxCommitsPerBatch": 10}
    assert cdc.options == {"captureInstance": "dbo_customers", "maxCommitsPerBatch": "10"}
    with pytest.raises(ConfigError, match="must be a mapping"):
        cdc.options = "captureInstance=dbo_orders"
    assert cdc.options["captureInstance"] == "dbo_customers"


def test_the_options_reference_has_one_heading_per_known_option_and_no_other():
    import re
    from pathlib import Path

    from mssql_cdc.source import KNOWN_OPTIONS

    text = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "options.md").read_text()
    section = text.split("\n## Source options\n", 1)[1].split("\n## ", 1)[0]
    headings = re.findall(r"^### (\S+)$", section, re.MULTILINE)
    assert len(headings) == len(set(headings))
    assert {h.lower() for h in headings} == KNOWN_OPTIONS
    from mssql_cdc import _core

    assert set(headings) == set(_core.source_option_names()), "spelled as the engine spells them"


@pytest.mark.parametrize("first", ["import mssql_cdc.reconcile", "import mssql_cdc; mssql_cdc.reconcile"])
def test_mssql_cdc_reconcile_is_the_function_whichever_is_imported_first(first):
    """As in 0.8.0: the package's attribute is the function, the module is importlib's."""
    import subprocess
    import sys

    script = (f"{first}\nimport importlib, inspect, mssql_cdc\nimport mssql_cdc.reconcile as r\n"
              "assert inspect.isfunction(mssql_cdc.reconcile) and r is mssql_cdc.reconcile\n"
              "assert inspect.ismodule(importlib.import_module('mssql_cdc.reconcile'))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
