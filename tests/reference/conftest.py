"""Fixtures of the Python package's tests: the venv of the reference library, mssql-cdc-pyspark
0.8.0 from PyPI (scripts/setup_reference.sh), which the comparison tests run as a black box."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def reference_python():
    """The reference venv's python, installed once if it is not there."""
    made = subprocess.run(["bash", str(ROOT / "scripts" / "setup_reference.sh")], capture_output=True, text=True,
                          timeout=900)
    assert made.returncode == 0, made.stderr[-3000:]
    return made.stdout.strip().splitlines()[-1]
