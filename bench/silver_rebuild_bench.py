"""The native silver rebuild from a snapshot (build/bench/silver_apply_bench), at several table
sizes and memory budgets: time, rows per second, peak resident memory (VmHWM), the runs it
spilled to disk and their bytes.

The data, built once into --dir/silver_rebuild/<rows> and kept: a bronze table holding only a
snapshot of that many rows (the silver_bench.py schema: id bigint key, qty int, name string of
24, amount decimal(18,2), bronze's metadata columns), written with delta-rs in files of about
128 MB. Each run rebuilds a fresh silver table from it and checks silver's row count. The
budget given as "all" is one big enough to hold every row, so that the rebuild keeps its one
run in memory: what a rebuild costs without spilling, beside the same rows with a bounded
budget.

    .venv/bin/python bench/silver_rebuild_bench.py [--rows 10000000,100000000]
        [--budgets "all,256 MiB"] [--dir bench/out]
"""

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import WriterProperties, write_deltalake

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_LSN = "0x" + "0" * 18 + "10"
SCHEMA = pa.schema([
    ("_capture_instance", pa.string()), ("_start_lsn", pa.string()), ("_seqval", pa.string()),
    ("_operation", pa.int32()), ("_command_id", pa.int32()), ("_commit_ts", pa.timestamp("us")),
    ("id", pa.int64()), ("qty", pa.int32()), ("name", pa.string()), ("amount", pa.decimal128(18, 2)),
    ("_batch_id", pa.int32()), ("_snapshot", pa.string()), ("_chunk", pa.int32()),
])


def log(msg):
    print(f"silver_rebuild_bench: {msg}", file=sys.stderr, flush=True)


def snapshot_batch(first, count):
    ids = pa.array(range(first, first + count), pa.int64())
    text = pc.utf8_lpad(pc.cast(ids, pa.string()), 19, "0")
    return pa.record_batch([
        pa.repeat("dbo_bench", count), pa.repeat(SNAPSHOT_LSN, count), pa.nulls(count, pa.string()),
        pa.repeat(pa.scalar(0, pa.int32()), count), pa.nulls(count, pa.int32()),
        pa.repeat(pa.scalar(1_700_000_000_000_000, pa.timestamp("us")), count),
        ids, pc.cast(pc.remainder(ids, 1000), pa.int32()), pc.binary_join_element_wise("name-", text, ""),
        pc.cast(pc.cast(pc.remainder(ids, 100000), pa.int32()), pa.decimal128(18, 2)),
        pa.nulls(count, pa.int32()), pa.repeat(SNAPSHOT_LSN, count), pa.nulls(count, pa.int32()),
    ], schema=SCHEMA)


def build(data, rows):
    stamp = data / "built.json"
    if stamp.exists() and json.loads(stamp.read_text()) == {"rows": rows}:
        return data / "bronze"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    log(f"building a bronze snapshot of {rows:,} rows")
    step = 1_000_000
    batches = (snapshot_batch(first, min(step, rows - first)) for first in range(0, rows, step))
    # Row groups of 131,072 rows (about 16 MB of these rows in Arrow), about what the engine's
    # own bronze writer makes under the default memory_budget.
    write_deltalake(str(data / "bronze"), pa.RecordBatchReader.from_batches(SCHEMA, batches),
                    target_file_size=128 << 20,
                    writer_properties=WriterProperties(max_row_group_size=131_072))
    stamp.write_text(json.dumps({"rows": rows}))
    return data / "bronze"


def run(bronze, work, budget):
    shutil.rmtree(work, ignore_errors=True)
    (work / "spill").mkdir(parents=True)
    args = [str(ROOT / "build" / "bench" / "silver_apply_bench"), "--bronze", str(bronze), "--silver",
            str(work / "silver"), "--control", str(work / "control"), "--key", "id", "--instance", "dbo_bench",
            "--memory-budget", budget, "--spill-directory", str(work / "spill")]
    result = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
    from deltalake import DeltaTable
    result["rows"] = DeltaTable(str(work / "silver")).to_pyarrow_dataset().count_rows()
    shutil.rmtree(work, ignore_errors=True)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000000,100000000")
    parser.add_argument("--budgets", default="all,256 MiB")
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    args = parser.parse_args()
    out = Path(args.dir).resolve()
    print("| rows | memory_budget | rebuild (s) | rows/s | peak RSS (MB) | runs spilled | spilled (MB) |")
    print("|---|---|---|---|---|---|---|")
    for rows in (int(r) for r in args.rows.split(",")):
        bronze = build(out / "silver_rebuild" / str(rows), rows)
        for budget in args.budgets.split(","):
            budget = budget.strip()
            given = "64 GiB" if budget == "all" else budget
            log(f"rebuilding {rows:,} rows with memory_budget {budget}")
            started = time.monotonic()
            r = run(bronze, out / "silver_rebuild_runs", given)
            if r["rows"] != rows or r["upserted"] != rows:
                raise RuntimeError(f"silver holds {r['rows']} rows ({r['upserted']} upserted), expected {rows}")
            log(f"done in {time.monotonic() - started:.1f} s")
            print(f"| {rows:,} | {budget} | {r['seconds']:.1f} | {rows / r['seconds']:,.0f} | {r['peak_rss_mb']:.0f} | "
                  f"{r['runs_spilled']} | {r['spilled_bytes'] / 1e6:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
