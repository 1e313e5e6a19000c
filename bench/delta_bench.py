"""Delta write throughput: the engine's writer (mssql_cdc._core.delta_append) next to delta-rs
(deltalake.write_deltalake) on the same in-memory Arrow table, each run into a new table.

Two shapes, like the source benchmark's: narrow (10 columns: bigint, int, bigint, a 24-character
string, decimal(18,2), timestamp, bool, double, date, a 36-character string) and wide (90
columns: a bigint key, 40 decimal(15,4), 40 short strings, 7 ints, a 200-character and a
300-character string). The writers alternate (which goes first flips each round); each is timed
over create + append of the whole table, and the median of the rounds is reported. "Arrow
MB/s" is the table's in-memory Arrow size over the time; "file MB" is what the table holds on
disk. Both use snappy-compressed Parquet and their default file sizes.

    .venv/bin/python bench/delta_bench.py [--narrow-rows 10000000] [--wide-rows 1000000]
                                          [--rounds 3] [--dir bench/out]
"""

import argparse
import gc
import platform
import shutil
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake

from mssql_cdc import _core

CHUNK = 1_000_000  # rows generated per chunk (keeps the temporary arrays small)


def mix(ids, k):
    """A deterministic pseudo-random non-negative int64 per id (multiplicative hashing)."""
    x = pc.multiply(pc.add(ids, pa.scalar(k * 7919, pa.int64())), pa.scalar(2654435761, pa.int64()))
    x = pc.bit_wise_xor(x, pc.shift_right(x, pa.scalar(29, pa.int64())))
    return pc.bit_wise_and(x, pa.scalar((1 << 62) - 1, pa.int64()))


def small(ids, k, bits):
    return pc.bit_wise_and(mix(ids, k), pa.scalar((1 << bits) - 1, pa.int64()))


def text(ids, k, length):
    """Strings of exactly `length` characters that vary with the id."""
    digits = pc.cast(small(ids, k, 40), pa.string())
    prefixed = pc.binary_join_element_wise(pa.scalar(f"v{k}-"), digits, "")
    return pc.utf8_rpad(pc.utf8_slice_codeunits(prefixed, 0, length), width=length, padding="x")


def decimal(ids, k, precision, scale, bits):
    """decimal(precision, scale) values with `bits` bits of unscaled integer."""
    unscaled = pc.cast(small(ids, k, bits), pa.decimal128(20, 0))
    step = pa.scalar(Decimal(1).scaleb(-scale), pa.decimal128(scale + 1, scale))
    return pc.cast(pc.multiply(unscaled, step), pa.decimal128(precision, scale))


def with_nulls(array, ids, k, every_bits=4):
    """About one value in 2**every_bits made NULL."""
    mask = pc.equal(small(ids, k + 101, every_bits), pa.scalar(0, pa.int64()))
    return pc.if_else(mask, pa.scalar(None, array.type), array)


def narrow_chunk(start, n):
    ids = pa.array(range(start, start + n), pa.int64())
    base_us = 1_767_225_600_000_000  # 2026-01-01 UTC
    created = pc.add(pa.scalar(base_us, pa.int64()), pc.multiply(ids, pa.scalar(1_000_003, pa.int64())))
    return pa.table({
        "id": ids,
        "qty": pc.cast(small(ids, 1, 10), pa.int32()),
        "total": pc.multiply(ids, pa.scalar(7, pa.int64())),
        "name": with_nulls(text(ids, 2, 24), ids, 2),
        "amount": decimal(ids, 3, 18, 2, 40),
        "created": pc.cast(created, pa.timestamp("us", tz="UTC")),
        "active": pc.equal(small(ids, 4, 1), pa.scalar(1, pa.int64())),
        "score": pc.divide(pc.cast(small(ids, 5, 30), pa.float64()), pa.scalar(1024.0)),
        "day": pc.cast(pc.cast(pc.add(small(ids, 6, 14), pa.scalar(18000, pa.int64())), pa.int32()), pa.date32()),
        "ref": text(ids, 7, 36),
    })


def wide_chunk(start, n):
    ids = pa.array(range(start, start + n), pa.int64())
    cols = {"id": ids}
    for k in range(40):
        cols[f"d{k:02d}"] = with_nulls(decimal(ids, 100 + k, 15, 4, 44), ids, 100 + k, 5)
    for k in range(40):
        cols[f"s{k:02d}"] = text(ids, 200 + k, 8 + k % 25)
    for k in range(7):
        cols[f"i{k}"] = pc.cast(small(ids, 300 + k, 31), pa.int32())
    cols["long_a"] = text(ids, 400, 200)
    cols["long_b"] = text(ids, 401, 300)
    return pa.table(cols)


def make_table(shape, rows):
    make = narrow_chunk if shape == "narrow" else wide_chunk
    chunks = [make(start, min(CHUNK, rows - start)) for start in range(0, rows, CHUNK)]
    return pa.concat_tables(chunks).combine_chunks()


def dir_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*.parquet") if "_delta_log" not in f.parts)


def write_ours(table, path):
    _core.delta_create(str(path), table.schema)
    result = _core.delta_append(str(path), table)
    assert result["written"] and result["rows"] == table.num_rows, result


def write_delta_rs(table, path):
    write_deltalake(str(path), table, mode="error")


WRITERS = {"mssql-cdc": write_ours, "delta-rs": write_delta_rs}


def timed(writer, table, path):
    shutil.rmtree(path, ignore_errors=True)
    gc.collect()
    t0 = time.perf_counter()
    WRITERS[writer](table, path)
    seconds = time.perf_counter() - t0
    # Both tables must hold every row, as delta-rs sees them (from the files' statistics).
    count = DeltaTable(str(path)).count()
    if count != table.num_rows:
        raise SystemExit(f"{writer} wrote {count} rows, expected {table.num_rows}")
    size = dir_bytes(path)
    shutil.rmtree(path, ignore_errors=True)
    return seconds, size


def run(shape, rows, rounds, out):
    t0 = time.perf_counter()
    table = make_table(shape, rows)
    print(f"delta_bench: {shape}: {rows} rows x {table.num_columns} columns, "
          f"{table.nbytes / 1e6:.0f} MB of Arrow, generated in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    times = {w: [] for w in WRITERS}
    sizes = {}
    order = list(WRITERS)
    for r in range(rounds):
        for writer in (order if r % 2 == 0 else order[::-1]):
            seconds, size = timed(writer, table, out / f"{shape}-{writer}")
            times[writer].append(seconds)
            sizes[writer] = size
            print(f"delta_bench: {shape} round {r + 1}: {writer} {seconds:.2f} s", file=sys.stderr, flush=True)
    result = {"shape": shape, "rows": rows, "columns": table.num_columns, "arrow_bytes": table.nbytes}
    for writer in WRITERS:
        result[writer] = {"median": statistics.median(times[writer]), "best": min(times[writer]),
                          "file_bytes": sizes[writer]}
    del table
    gc.collect()
    return result


def markdown(results, rounds):
    lines = [
        "| table | rows | columns | Arrow MB | writer | median s | rows/s | Arrow MB/s | file MB | best s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for r in results:
        mb = r["arrow_bytes"] / 1e6
        for writer in WRITERS:
            w = r[writer]
            lines.append(f"| {r['shape']} | {r['rows']} | {r['columns']} | {mb:.0f} | {writer} | {w['median']:.2f} | "
                         f"{r['rows'] / w['median']:.0f} | {mb / w['median']:.1f} | {w['file_bytes'] / 1e6:.0f} | "
                         f"{w['best']:.2f} |")
        ratios.append((r["shape"], r["delta-rs"]["median"] / r["mssql-cdc"]["median"]))
    lines.append("")
    lines.append(f"Throughput ratio, mssql-cdc / delta-rs (median of {rounds}; above 1 means faster than delta-rs): "
                 + ", ".join(f"{shape} {ratio:.2f}" for shape, ratio in ratios) + ".")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--narrow-rows", type=int, default=10_000_000)
    p.add_argument("--wide-rows", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", default="bench/out")
    args = p.parse_args()
    out = Path(args.dir) / "delta_bench"
    out.mkdir(parents=True, exist_ok=True)
    import deltalake

    results = [run("narrow", args.narrow_rows, args.rounds, out), run("wide", args.wide_rows, args.rounds, out)]
    print(f"Delta writes, new table, snappy: mssql-cdc {_core.__version__} vs deltalake {deltalake.__version__} "
          f"(pyarrow {pa.__version__}, Python {platform.python_version()}).")
    print()
    print(markdown(results, args.rounds))


if __name__ == "__main__":
    main()
