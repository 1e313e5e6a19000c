"""The extension's core calls and the error classes, as Python sees them."""

import pytest

import mssql_cdc
from mssql_cdc import _core


def test_lsn_calls_follow_sql_server():
    assert _core.lsn_normalize("2a000001000001") == "0x0000002A000001000001"
    assert _core.lsn_increment("0x0000002A0000010000FF") == "0x0000002A000001000100"
    assert _core.lsn_decrement("0x0000002A000001000100") == "0x0000002A0000010000FF"


def test_bad_lsn_is_a_value_error_named_like_the_reference():
    with pytest.raises(mssql_cdc.ConfigError) as info:
        _core.lsn_increment("0x12")
    assert isinstance(info.value, ValueError)
    assert "0x followed by 20 hex digits" in str(info.value)


def test_offset_round_trip_keeps_the_contract():
    text = '{"commit_ts": "2026-01-02T03:04:05.678", "lsn": "0x0000002a000001000001"}'
    assert _core.offset_normalize(text) == (
        '{"lsn": "0x0000002A000001000001", "commit_ts": "2026-01-02T03:04:05.678"}'
    )


def test_type_mapping_and_unsupported_types():
    assert _core.spark_type("decimal(38,10)") == "DECIMAL(38,10)"
    assert _core.spark_type("datetimeoffset(7)") == "TIMESTAMP"
    with pytest.raises(mssql_cdc.UnsupportedTypeError, match="geography"):
        _core.spark_type("geography")


def test_error_classes_have_the_reference_bases():
    assert issubclass(mssql_cdc.DataLossError, RuntimeError)
    assert issubclass(mssql_cdc.SchemaChangedError, RuntimeError)
    assert issubclass(mssql_cdc.PermissionError, PermissionError)
    assert issubclass(mssql_cdc.ConfigError, ValueError)


def test_a_verdict_covers_the_periods_ending_at_or_before_it():
    assert _core.verdict_covers("2026-03-01T10:00:00.000", "2026-03-01T10:00:00")
    assert _core.verdict_covers("2026-03-01T10:00:00.000", "2026-03-01T09:59:59.999")
    assert not _core.verdict_covers("2026-03-01T10:00:00.000", "2026-03-01T10:00:00.001")
    assert not _core.verdict_covers(None, "2000-01-01")
    with pytest.raises(ValueError, match="period_end must be a UTC time"):
        _core.verdict_covers(None, "yesterday")


def test_a_verdict_write_that_loses_a_conflict_backs_off_doubling_up_to_two_seconds():
    retry = _core.ConflictRetry()
    delays = [retry.next_delay_seconds() for _ in range(9)]
    caps = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
    for delay, cap in zip(delays, caps):
        assert cap / 2 <= delay <= cap


def test_a_verdict_write_reports_the_versions_it_lost_to():
    retry = _core.ConflictRetry()
    for version in (3, 5, 5, 4):  # newer, the same, and older all keep it trying within the minute
        retry.saw_table_version(version)
        assert retry.next_delay_seconds() is not None
