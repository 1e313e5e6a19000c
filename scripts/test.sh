#!/usr/bin/env bash
# Runs every test suite against the tree `make build` left: GoogleTest (ctest), then pytest
# (the Python package, the CLI, and the Delta tables read back by delta-rs and Spark).
# Exits non-zero when any suite fails.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
ctest --test-dir build --output-on-failure -j2 || status=1
MSSQL_CDC_BIN="$PWD/build/mssql-cdc" .venv/bin/python -m pytest -q tests/python tests/cli tests/delta tests/engine tests/spark || status=1
exit $status
