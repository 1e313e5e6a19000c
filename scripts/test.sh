#!/usr/bin/env bash
# Runs every test suite against the tree `make build` left: GoogleTest (ctest), then pytest
# (the Python package, the CLI, the Delta tables read back by delta-rs and Spark, the engine on
# an S3 emulator, and Spark mode on a classic session), the command-line tests again through the console script a pip
# install gives, then Spark mode again through a local Spark Connect server that
# the tests start themselves (MSSQL_CDC_TEST_SPARK=connect), then the wheel: built by
# scripts/build_wheel.sh and installed in a minimal Debian root (tests/wheel).
# Exits non-zero when any suite fails. Each pytest run ends with its slowest tests, so that the
# suites' share of the 45-minute budget can be watched.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
ctest --test-dir build --output-on-failure -j2 || status=1
export MSSQL_CDC_BIN="$PWD/build/mssql-cdc"
# The suites that drive child processes run on two workers (pytest-xdist): they mostly wait.
.venv/bin/python -m pytest -q -n 2 --durations=12 tests/cli tests/storage || status=1
.venv/bin/python -m pytest -q --durations=12 tests/python tests/delta tests/engine tests/sql tests/spark || status=1
echo "The command-line suite again, through the package's mssql-cdc console script:"
MSSQL_CDC_BIN="$PWD/.venv/bin/mssql-cdc" .venv/bin/python -m pytest -q -n 2 tests/cli || status=1
echo "Spark mode again, through Spark Connect:"
MSSQL_CDC_TEST_SPARK=connect .venv/bin/python -m pytest -q --durations=12 tests/spark || status=1
# Builds the wheel for a Python (empty: .venv's) and runs a test file on it, the wheel's path
# in the variable named; the build's log is shown only when the build fails.
wheel_suite() {
  local python=$1 test=$2 variable=$3 wheel
  shift 3
  if wheel=$(PYTHON=$python scripts/build_wheel.sh 2> build-wheel.log | tail -1) && [[ -f "$wheel" ]]; then
    env "$variable=$PWD/$wheel" "$@" .venv/bin/python -m pytest -q "$test" || status=1
  else
    cat build-wheel.log >&2
    status=1
  fi
}
echo "The wheel (make wheel), installed and used in a minimal Debian root:"
wheel_suite "" tests/wheel/test_wheel_in_debian.py MSSQL_CDC_WHEEL
# The abi3 wheel needs a Python 3.12 or later to build; Debian 12 has none, so it is built and
# tested where one is installed (pyenv's, on the machines CI runs on), and said so otherwise.
abi3_pythons=()
for version in 3.12 3.13; do
  found=$(command -v pyenv >/dev/null && pyenv prefix "$(pyenv versions --bare | grep "^$version" | tail -1)" 2>/dev/null || true)
  [[ -n "$found" && -x "$found/bin/python$version" ]] && abi3_pythons+=("$found/bin/python$version")
done
if ((${#abi3_pythons[@]})); then
  echo "The abi3 wheel, on ${abi3_pythons[*]}:"
  wheel_suite "${abi3_pythons[0]}" tests/wheel/test_abi3_wheel.py MSSQL_CDC_ABI3_WHEEL \
    MSSQL_CDC_ABI3_PYTHONS="$(IFS=:; echo "${abi3_pythons[*]}")"
else
  echo "The abi3 wheel was not built: no Python 3.12 or later is installed here (pyenv)."
fi
exit $status
