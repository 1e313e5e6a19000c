"""The `cli` fixture for every test folder below: runs the mssql-cdc binary (MSSQL_CDC_BIN, else
build/mssql-cdc) and fails with its exit status, stderr and the end of its stdout when it
exits non-zero."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def cli():
    binary = os.environ.get("MSSQL_CDC_BIN", str(ROOT / "build" / "mssql-cdc"))

    def run(*args, check=True):
        result = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=300)
        if check and result.returncode != 0:
            raise AssertionError(f"mssql-cdc {' '.join(map(str, args))} exited with {result.returncode}:\n"
                                 f"{result.stderr}\n{result.stdout[-3000:]}")
        return result

    return run
