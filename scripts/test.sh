#!/usr/bin/env bash
# Runs the test suites against the tree `make build` left, each part timed, and prints every
# part's time at the end so that each run shows the suite's share of its budget (25 minutes on
# two cores for `make test`, 5 for `make test-quick`). Exits non-zero when any part fails.
#
#   scripts/test.sh        every part (make test):
#     - the demo's build (scripts/build_demo.sh), which compiles the engine a batch at a time;
#     - GoogleTest (ctest);
#     - Spark mode on a classic session, then the Spark SIGKILL scenarios, then the users' guide
#       built as a site (make docs) and looked at in headless Chromium; beside them, in a lane
#       of their own,
#     - pytest of the command line, the object stores, the Python package, the Delta tables
#       read back by delta-rs and Spark, the engine, and other people's SQL Server clients
#       (Microsoft's JDBC driver) against sim serve, on two workers;
#     - Spark mode again through a local Spark Connect server (only the tests marked `connect`:
#       tests/spark/README.md says which and why);
#     - the wheel (make wheel), installed and used in a minimal Debian root, and the abi3 wheel.
#   scripts/test.sh quick  the edit-compile-test loop (make test-quick): ctest and the Python
#                          tests not marked spark, sigkill or slow.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
status=0
# The wheel tests install packages from the index; a download cut off part-way is resumed.
export PIP_RESUME_RETRIES=${PIP_RESUME_RETRIES:-20} PIP_RETRIES=${PIP_RETRIES:-10}
# Each part's line for the summary, written to a file so that parts run in a background lane
# record theirs too.
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
# Runs a part, records its time and outcome, and goes on whatever it returned.
part() {
  local name=$1 start=$SECONDS outcome=passed
  shift
  echo "== $name"
  "$@" || { outcome=FAILED; status=1; }
  printf '%-52s %5d s  %s\n' "$name" $((SECONDS - start)) "$outcome" >> "$times_file"
  return 0
}
pytest() { .venv/bin/python -m pytest -q "$@"; }
# A lane of parts run one after another beside the parts that follow it, its output kept until
# lane_wait shows it: the command-line, object-store, package and Spark tests mostly wait on
# child processes and the wheel builds are served by ccache, so they share the machine with the
# classic Spark tests at little cost to either.
lane_start() {
  lane_log=$(mktemp)
  ( "$@" ) > "$lane_log" 2>&1 &
  lane_pid=$!
}
lane_wait() {
  wait "$lane_pid" || status=1
  echo "== the lane run beside the parts above"
  cat "$lane_log"
  rm -f "$lane_log"
}
export MSSQL_CDC_BIN="$PWD/build/mssql-cdc"

if [[ $mode == quick ]]; then
  part "ctest" ctest --test-dir build --output-on-failure -j2
  part "pytest (no spark, sigkill or slow)" pytest -n 2 -m "not spark and not sigkill and not slow" \
    tests/python tests/reference tests/cli tests/delta tests/engine tests/sql tests/clients
else
  # Builds the wheel for a Python (empty: .venv's) and runs a test file on it, the wheel's path
  # in the variable named; the build's log is shown only when the build fails.
  wheel_suite() {
    local python=$1 test=$2 variable=$3 wheel
    shift 3
    if wheel=$(PYTHON=$python scripts/build_wheel.sh 2> build-wheel.log | tail -1) && [[ -f "$wheel" ]]; then
      env "$variable=$PWD/$wheel" "$@" .venv/bin/python -m pytest -q "$test"
    else
      cat build-wheel.log >&2
      return 1
    fi
  }
  # The abi3 wheel needs a Python 3.12 or later to build; Debian 12 has none, so it is built and
  # tested where one is installed (pyenv's, on the machines CI runs on), and said so otherwise.
  abi3_pythons=()
  for version in 3.12 3.13; do
    found=$(command -v pyenv >/dev/null && pyenv prefix "$(pyenv versions --bare | grep "^$version" | tail -1)" 2>/dev/null || true)
    [[ -n "$found" && -x "$found/bin/python$version" ]] && abi3_pythons+=("$found/bin/python$version")
  done
  # Everything but the Spark suites, in the lane beside them.
  beside_spark() {
    part "pytest cli, storage, python, reference, delta, engine, sql, clients (2 workers)" pytest -n 2 \
      --durations=12 tests/cli tests/storage tests/python tests/reference tests/delta tests/engine tests/sql \
      tests/clients
    # Its own Spark Connect server and metastore; the tests that run the guide's examples as
    # written share one checkpoint folder with the classic pass and take turns holding it.
    part "pytest spark through Spark Connect" env MSSQL_CDC_TEST_SPARK=connect \
      .venv/bin/python -m pytest -q --durations=12 tests/spark
    part "wheel in a minimal Debian root" wheel_suite "" tests/wheel/test_wheel_in_debian.py MSSQL_CDC_WHEEL
    if ((${#abi3_pythons[@]})); then
      part "abi3 wheel on ${#abi3_pythons[@]} Pythons" wheel_suite "${abi3_pythons[0]}" \
        tests/wheel/test_abi3_wheel.py MSSQL_CDC_ABI3_WHEEL \
        MSSQL_CDC_ABI3_PYTHONS="$(IFS=:; echo "${abi3_pythons[*]}")"
    else
      echo "The abi3 wheel was not built: no Python 3.12 or later is installed here (pyenv)."
    fi
  }

  part "demo build (unity)" scripts/build_demo.sh
  part "ctest" ctest --test-dir build --output-on-failure -j2
  lane_start beside_spark
  part "pytest spark (classic session)" pytest --durations=12 -m "not sigkill" tests/spark
  # Last, when the lane has most likely ended: each kill starts a Spark driver again, whose
  # start-up and waves a busy machine stretches several times over.
  part "pytest spark SIGKILL scenarios (classic session)" pytest --durations=12 -m sigkill tests/spark
  docs_site() { scripts/build_docs.sh > /dev/null && pytest tests/docs; }
  part "docs site, in Chromium" docs_site
  lane_wait
fi
echo
echo "Time of each part (the lane's parts ran beside the classic Spark suites):"
sed 's/^/  /' "$times_file"
grep -q ' FAILED$' "$times_file" && status=1
echo "  total $((SECONDS / 60)) min $((SECONDS % 60)) s"
exit $status
