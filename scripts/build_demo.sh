#!/usr/bin/env bash
# Builds the mssql-cdc executable alone, for `make demo`: its own build folder (build-demo/),
# no tests, no benchmarks, no Python extension, and the engine's libraries compiled a batch of
# sources at a time (cmake/UnityBuild.cmake), which on two cores takes a third of the time of
# one file at a time. Prints the executable's path.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-demo
if [[ ! -f $dir/build.ninja ]]; then
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMSSQL_CDC_BUILD_TESTS=OFF -DMSSQL_CDC_BUILD_BENCH=OFF -DMSSQL_CDC_BUILD_PYTHON=OFF \
    -DMSSQL_CDC_UNITY=ON -DPython_EXECUTABLE="$PWD/.venv/bin/python" > "$dir/configure.log" \
    || { cat "$dir/configure.log" >&2; exit 1; }
fi
# The compiler's output goes to a log, shown when the build fails. (No dry run decides whether
# to say so: the globs' re-check is a step of every ninja run, so one never says "no work".)
echo "building $dir/mssql-cdc (about 3 minutes on two cores the first time, seconds after; log: $dir/build.log)" >&2
ninja -C "$dir" mssql-cdc > "$dir/build.log" 2>&1 || { tail -60 "$dir/build.log" >&2; exit 1; }
echo "$dir/mssql-cdc"
