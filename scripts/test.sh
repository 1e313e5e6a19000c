#!/usr/bin/env bash
# Runs every test suite against the tree `make build` left: GoogleTest (ctest), then pytest
# (the Python package, the CLI, the Delta tables read back by delta-rs and Spark, and Spark
# mode on a classic session), then Spark mode again through a local Spark Connect server that
# the tests start themselves (MSSQL_CDC_TEST_SPARK=connect), then the wheel: built by
# scripts/build_wheel.sh and installed in a minimal Debian root (tests/wheel).
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
echo "The wheel (make wheel), installed and used in a minimal Debian root:"
if wheel=$(scripts/build_wheel.sh 2> build-wheel.log | tail -1) && [[ -f "$wheel" ]]; then
  MSSQL_CDC_WHEEL="$PWD/$wheel" .venv/bin/python -m pytest -q tests/wheel || status=1
else
  cat build-wheel.log >&2
  status=1
fi
exit $status
