#!/usr/bin/env bash
# Runs every test suite against the tree `make build` left: GoogleTest (ctest), then pytest
# (the Python package, the CLI, the Delta tables read back by delta-rs and Spark, and Spark
# mode on a classic session), then Spark mode again through a local Spark Connect server that
# the tests start themselves (MSSQL_CDC_TEST_SPARK=connect).
# Exits non-zero when any suite fails. Each pytest run ends with its slowest tests, so that the
# suites' share of the 45-minute budget can be watched.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
ctest --test-dir build --output-on-failure -j2 || status=1
export MSSQL_CDC_BIN="$PWD/build/mssql-cdc"
.venv/bin/python -m pytest -q --durations=12 tests/python tests/cli tests/delta tests/engine tests/spark || status=1
echo "Spark mode again, through Spark Connect:"
MSSQL_CDC_TEST_SPARK=connect .venv/bin/python -m pytest -q --durations=12 tests/spark || status=1
exit $status
