"""LSNs as text: ``0x`` and 20 uppercase hex digits, the form every offset and table holds.

``normalize`` accepts what the engine accepts (1 to 20 hex digits, with or without ``0x``, in
any case; short ones are padded on the left) and the 10 bytes of a binary(10) LSN, and refuses
anything else with a ValueError.
"""

from __future__ import annotations

from typing import NewType

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError

Lsn = NewType("Lsn", str)

LSN_BYTES = 10
ZERO_LSN = Lsn("0x" + "0" * (2 * LSN_BYTES))


def normalize(value: str | bytes | bytearray) -> Lsn:
    """`value` in the canonical form: text as above, or SQL Server's binary(10) as bytes (what a
    driver returns for an LSN column); ValueError when it is not an LSN."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) != LSN_BYTES:
            raise ConfigError(f"an LSN as bytes is SQL Server's binary({LSN_BYTES}), {LSN_BYTES} bytes, "
                              f"not {len(value)}")
        value = bytes(value).hex()
    if not isinstance(value, str):
        raise ConfigError("an LSN is a string of hex digits such as 0x0000002A000001000001 or 10 bytes, "
                          f"not {value!r}")
    return Lsn(_core.lsn_normalize(value))


def from_int(value: int) -> Lsn:
    """The LSN of an unsigned 80-bit integer."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << (8 * LSN_BYTES):
        raise ConfigError(f"an LSN is an integer from 0 to 2**80 - 1, not {value!r}")
    return normalize(format(value, "X"))


def to_int(lsn: str) -> int:
    """The unsigned integer of an LSN (any form ``normalize`` accepts)."""
    return int(normalize(lsn), 16)
