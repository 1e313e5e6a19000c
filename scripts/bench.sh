#!/usr/bin/env bash
# Runs the benchmarks against the tree `make build` left and appends their figures, with the
# command, the machine and the commit, to bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
out=bench/out/latest.md
started=$SECONDS
# Databases are built on first use and kept: a run that finds them skips their building.
databases_at_start=$(find bench/out -maxdepth 1 -name '*.sim' | wc -l)
# How long each step took, printed under its table, so that the half hour can be checked.
took() { echo; echo "Step time: $((SECONDS - step_start)) s."; step_start=$SECONDS; }

# The peers of bench/odbc_bench.py, installed into .venv once per change of the pins.
stamp=.venv/.requirements-bench.sha256
want=$(sha256sum scripts/requirements-bench.txt | cut -d' ' -f1)
if [[ ! -f $stamp || "$(cat $stamp)" != "$want" ]]; then
  echo "bench: installing scripts/requirements-bench.txt into .venv"
  scripts/pip_install.sh .venv/bin/python -q -r scripts/requirements-bench.txt
  echo "$want" > "$stamp"
fi
{
  echo
  echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
  echo
  step_start=$SECONDS
  echo "Command: \`make bench\` (\`build/bench/source_bench --rows ${BENCH_ROWS:-1000000} --wide-rows ${BENCH_WIDE_ROWS:-400000} --dir bench/out\`)"
  echo
  build/bench/source_bench --rows "${BENCH_ROWS:-1000000}" --wide-rows "${BENCH_WIDE_ROWS:-400000}" --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/delta_bench.py --narrow-rows ${BENCH_DELTA_NARROW_ROWS:-2000000} --wide-rows ${BENCH_DELTA_WIDE_ROWS:-400000} --dir bench/out\`"
  echo
  .venv/bin/python bench/delta_bench.py --narrow-rows "${BENCH_DELTA_NARROW_ROWS:-2000000}" \
    --wide-rows "${BENCH_DELTA_WIDE_ROWS:-400000}" --dir bench/out
  took
  echo
  echo "Command: \`build/bench/engine_bench --rows ${BENCH_ENGINE_ROWS:-2000000} --wide-rows ${BENCH_ENGINE_WIDE_ROWS:-400000} --tables 100 --dir bench/out\`"
  echo
  build/bench/engine_bench --rows "${BENCH_ENGINE_ROWS:-2000000}" \
    --wide-rows "${BENCH_ENGINE_WIDE_ROWS:-400000}" --tables 100 --dir bench/out 2>/dev/null
  took
  echo
  echo "Command: \`.venv/bin/python bench/storage_bench.py --rows ${BENCH_STORAGE_ROWS:-2000000} --commits ${BENCH_STORAGE_COMMITS:-500} --versions ${BENCH_STORAGE_VERSIONS:-100000} --store-versions ${BENCH_STORAGE_STORE_VERSIONS:-10000} --dir bench/out\`"
  echo
  .venv/bin/python bench/storage_bench.py --rows "${BENCH_STORAGE_ROWS:-2000000}" \
    --commits "${BENCH_STORAGE_COMMITS:-500}" --versions "${BENCH_STORAGE_VERSIONS:-100000}" \
    --store-versions "${BENCH_STORAGE_STORE_VERSIONS:-10000}" --dir bench/out 2>/dev/null
  took
  echo
  echo "Command: \`.venv/bin/python bench/odbc_bench.py --rows ${BENCH_ODBC_ROWS:-1000000} --wide-rows ${BENCH_ODBC_WIDE_ROWS:-250000} --budget ${BENCH_ODBC_BUDGET:-240} --dir bench/out\`"
  echo
  .venv/bin/python bench/odbc_bench.py --rows "${BENCH_ODBC_ROWS:-1000000}" \
    --wide-rows "${BENCH_ODBC_WIDE_ROWS:-250000}" --budget "${BENCH_ODBC_BUDGET:-240}" --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/odbc_bench.py --rows ${BENCH_TLS_ROWS:-500000} --wide-rows ${BENCH_TLS_WIDE_ROWS:-100000} --repeats 2 --budget ${BENCH_TLS_BUDGET:-180} --dir bench/out --readers ours,ours-tls,ours-strict,ours-msodbc18-tls,ours-driver-tls,ours-token,ours-msodbc18-token\`"
  echo
  .venv/bin/python bench/odbc_bench.py --rows "${BENCH_TLS_ROWS:-500000}" \
    --wide-rows "${BENCH_TLS_WIDE_ROWS:-100000}" --repeats 2 --budget "${BENCH_TLS_BUDGET:-180}" \
    --dir bench/out --readers ours,ours-tls,ours-strict,ours-msodbc18-tls,ours-driver-tls,ours-token,ours-msodbc18-token
  took
  echo
  echo "Command: \`build/bench/memory_bench --txn-rows ${BENCH_MEMORY_TXN_ROWS:-5000000} --backlog-rows ${BENCH_MEMORY_BACKLOG_ROWS:-20000000} --burst-rows ${BENCH_MEMORY_BURST_ROWS:-500000} --dir bench/out\`"
  echo
  build/bench/memory_bench --txn-rows "${BENCH_MEMORY_TXN_ROWS:-5000000}" \
    --backlog-rows "${BENCH_MEMORY_BACKLOG_ROWS:-20000000}" \
    --burst-rows "${BENCH_MEMORY_BURST_ROWS:-500000}" --dir bench/out 2>/dev/null
  took
  echo
  echo "Command: \`build/bench/fleet_bench --tables ${BENCH_FLEET_TABLES:-1000} --backlog-rows ${BENCH_FLEET_BACKLOG_ROWS:-1600000} --dir bench/out\`"
  echo
  build/bench/fleet_bench --tables "${BENCH_FLEET_TABLES:-1000}" \
    --backlog-rows "${BENCH_FLEET_BACKLOG_ROWS:-1600000}" --dir bench/out 2>/dev/null
  took
  echo
  echo "Command: \`.venv/bin/python bench/spark_streams_bench.py --streams 1,10,50 --hold 10 --dir bench/out\`"
  echo
  .venv/bin/python bench/spark_streams_bench.py --streams 1,10,50 --hold 10 --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/limits_bench.py --dir bench/out\`"
  echo
  .venv/bin/python bench/limits_bench.py --dir bench/out
  took
  echo
  # Both libraries on the same wire: one simulated database served over TDS (--wire).
  echo "Command: \`.venv/bin/python bench/spark_bench.py --rows ${BENCH_SPARK_ROWS:-200000} --tables 5 --many-rows ${BENCH_SPARK_MANY_ROWS:-20000} --rounds ${BENCH_SPARK_ROUNDS:-1} --dir bench/out --wire\`"
  echo
  .venv/bin/python bench/spark_bench.py --rows "${BENCH_SPARK_ROWS:-200000}" --tables 5 \
    --many-rows "${BENCH_SPARK_MANY_ROWS:-20000}" --rounds "${BENCH_SPARK_ROUNDS:-1}" --dir bench/out --wire
  took
  echo
  echo "Command: \`build/bench/snapshot_bench --rows ${BENCH_SNAPSHOT_ROWS:-10000000} --dir bench/out\`"
  echo
  build/bench/snapshot_bench --rows "${BENCH_SNAPSHOT_ROWS:-10000000}" --dir bench/out 2>/dev/null
  took
  echo
  # Side by side at the most rows the reference's fake backend can hold on a 24 GiB machine
  # (it loads the whole table into each Python worker), then ours alone at the issue's size.
  echo "Command: \`.venv/bin/python bench/snapshot_spark_bench.py --rows ${BENCH_SNAPSHOT_SPARK_ROWS:-3000000} --dir bench/out\`"
  echo
  .venv/bin/python bench/snapshot_spark_bench.py --rows "${BENCH_SNAPSHOT_SPARK_ROWS:-3000000}" --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/snapshot_spark_bench.py --rows ${BENCH_SNAPSHOT_SPARK_BIG_ROWS:-10000000} --libs ours --dir bench/out\`"
  echo
  .venv/bin/python bench/snapshot_spark_bench.py --rows "${BENCH_SNAPSHOT_SPARK_BIG_ROWS:-10000000}" --libs ours \
    --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/snapshot_spark_bench.py --rows ${BENCH_SNAPSHOT_SPARK_BIG_ROWS:-10000000} --table wide --libs ours --dir bench/out\`"
  echo
  .venv/bin/python bench/snapshot_spark_bench.py --rows "${BENCH_SNAPSHOT_SPARK_BIG_ROWS:-10000000}" --table wide \
    --libs ours --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/silver_bench.py --rows ${BENCH_SILVER_ROWS:-10000000} --changes ${BENCH_SILVER_CHANGES:-100000} --dir bench/out\`"
  echo
  .venv/bin/python bench/silver_bench.py --rows "${BENCH_SILVER_ROWS:-10000000}" \
    --changes "${BENCH_SILVER_CHANGES:-100000}" --dir bench/out
  took
  echo
  # The rebuild in memory and in a bounded budget at 10,000,000 rows, then a bounded budget at
  # BENCH_SILVER_REBUILD_BIG_ROWS (100,000,000 for the issue's figure: about 10 more minutes
  # the first time, most of it building the bronze table, which bench/out keeps).
  echo "Command: \`.venv/bin/python bench/silver_rebuild_bench.py --rows ${BENCH_SILVER_REBUILD_ROWS:-10000000} --budgets \"all,256 MiB\" --dir bench/out\`"
  echo
  .venv/bin/python bench/silver_rebuild_bench.py --rows "${BENCH_SILVER_REBUILD_ROWS:-10000000}" \
    --budgets "all,256 MiB" --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/silver_rebuild_bench.py --rows ${BENCH_SILVER_REBUILD_BIG_ROWS:-30000000} --budgets \"256 MiB\" --dir bench/out\`"
  echo
  .venv/bin/python bench/silver_rebuild_bench.py --rows "${BENCH_SILVER_REBUILD_BIG_ROWS:-30000000}" \
    --budgets "256 MiB" --dir bench/out
  took
  echo
  # Side by side at the most rows the reference's fake backend holds comfortably (it loads the
  # whole table into the driver's Python for each count), then native and ours at the issue's size.
  echo "Command: \`.venv/bin/python bench/reconcile_bench.py --rows ${BENCH_RECONCILE_ROWS:-3000000} --dir bench/out\`"
  echo
  .venv/bin/python bench/reconcile_bench.py --rows "${BENCH_RECONCILE_ROWS:-3000000}" --dir bench/out
  took
  echo
  echo "Command: \`.venv/bin/python bench/reconcile_bench.py --rows ${BENCH_RECONCILE_BIG_ROWS:-10000000} --libs native,ours --tier2-bucket --dir bench/out\`"
  echo
  .venv/bin/python bench/reconcile_bench.py --rows "${BENCH_RECONCILE_BIG_ROWS:-10000000}" --libs native,ours \
    --tier2-bucket --dir bench/out
  took
  echo
  echo "make bench took $((SECONDS - started)) s in all; bench/out held $databases_at_start benchmark databases at the start."
} | tee "$out"
cat "$out" >> bench/RESULTS.md
echo "bench: figures appended to bench/RESULTS.md"
