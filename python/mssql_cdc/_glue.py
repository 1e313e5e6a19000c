"""Small helpers the Spark modules share: option maps as Spark passes them, and locations joined.

Promises: option names are matched ignoring case by the engine's own key
(``_core.option_name_key``), without parsing or validating any value (the engine does that).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError


def option_text(value: Any) -> str:
    """An option value as Spark's ``DataStreamReader.option`` would pass it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def copy_options(options: Mapping[str, Any], what: str = "options") -> dict[str, str]:
    """A plain ``dict[str, str]`` copy of a mapping of options (names kept as given)."""
    if not isinstance(options, Mapping):
        raise ConfigError(f"{what} must be a mapping of option names to values, not {type(options).__name__}")
    out: dict[str, str] = {}
    for name, value in options.items():
        if not isinstance(name, str):
            raise ConfigError(f"{what}: option names must be strings, not {name!r}")
        out[name] = option_text(value)
    return out


def find_option(options: Mapping[str, str], name: str) -> str | None:
    """The key under which `name` is set, ignoring case as the engine does, or None."""
    wanted = _core.option_name_key(name)
    for key in options:
        if _core.option_name_key(key) == wanted:
            return key
    return None


def get_option(options: Mapping[str, str], name: str) -> str | None:
    key = find_option(options, name)
    return None if key is None else options[key]


def set_option(options: dict[str, str], name: str, value: str) -> None:
    """Sets `name`, replacing any spelling of it that differs only in case."""
    wanted = _core.option_name_key(name)
    for key in [k for k in options if _core.option_name_key(k) == wanted]:
        del options[key]
    options[name] = value


def without_options(options: Mapping[str, str], *names: str) -> dict[str, str]:
    """`options` less every spelling of `names` (matched ignoring case, as the engine does)."""
    dropped = {_core.option_name_key(name) for name in names}
    return {k: v for k, v in options.items() if _core.option_name_key(k) not in dropped}


def merged_options(base: Mapping[str, str], overrides: Mapping[str, Any]) -> dict[str, str]:
    """`base` with `overrides` applied, names matched ignoring case (the override's spelling wins)."""
    out = dict(base)
    for name, value in copy_options(overrides, "per-table options").items():
        set_option(out, name, value)
    return out


def join(location: str, name: str) -> str:
    """`name` inside the directory `location` (a path or URI), keeping its form."""
    return location.rstrip("/") + "/" + name


def utc_micros(ts: _dt.datetime, what: str = "ts_utc") -> int:
    """Microseconds since 1970-01-01 UTC of a UTC instant: a naive datetime is read as UTC."""
    if not isinstance(ts, _dt.datetime):
        raise ConfigError(f"{what} is a datetime in UTC, not {ts!r}")
    if ts.tzinfo is not None:
        ts = ts.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    delta = ts - _dt.datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def json_scalar(value: Any) -> Any:
    """A column value as the engine reads one in JSON: decimals and times as text, bytes as 0x hex."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex().upper()
    return value
