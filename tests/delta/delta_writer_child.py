"""A writer process for the concurrency and crash tests: appends to one Delta table through the
engine, each append tagged with txn (app_id, version) and holding `rows` rows whose `marker`
column is that version plus `marker_base`.

    python delta_writer_child.py URI APP_ID --count N --rows R [--marker-base B] [--resume] [--wait-go]

--resume starts after the app's last committed version (as a restarted stream does), first
replaying that version, which must write nothing. --wait-go prints "ready" and waits for a line
on stdin before appending (so that two writers start together). Without --count the loop runs
until the process is killed. Prints one JSON line with the totals at the end.
"""

import argparse
import json
import sys

import pyarrow as pa

from mssql_cdc import _core

SCHEMA = pa.schema([
    pa.field("marker", pa.int64(), nullable=False),
    pa.field("seq", pa.int32(), nullable=False),
    pa.field("writer", pa.string()),
    pa.field("pad", pa.string()),
])


def batch(marker, rows, writer):
    return pa.table({
        "marker": pa.array([marker] * rows, pa.int64()),
        "seq": pa.array(range(rows), pa.int32()),
        "writer": pa.array([writer] * rows),
        "pad": pa.array([f"{marker:012d}-{i:06d}-" + "x" * 40 for i in range(rows)]),
    }, schema=SCHEMA)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("uri")
    p.add_argument("app_id")
    p.add_argument("--count", type=int, default=None)
    p.add_argument("--rows", type=int, default=1)
    p.add_argument("--marker-base", type=int, default=0)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--wait-go", action="store_true")
    args = p.parse_args()

    start = 0
    if args.resume:
        last = _core.delta_snapshot(args.uri)["app_versions"].get(args.app_id)
        if last is not None:
            replay = _core.delta_append(args.uri, batch(args.marker_base + last, args.rows, args.app_id),
                                        app_id=args.app_id, version=last)
            if replay["written"]:
                print(json.dumps({"error": f"replay of version {last} wrote {replay}"}), flush=True)
                return 3
            start = last + 1
    print("ready", flush=True)
    if args.wait_go:
        sys.stdin.readline()

    appends = attempts = 0
    version = start
    while args.count is None or appends < args.count:
        r = _core.delta_append(args.uri, batch(args.marker_base + version, args.rows, args.app_id),
                               app_id=args.app_id, version=version)
        if not r["written"]:
            print(json.dumps({"error": f"append of version {version} wrote nothing: {r}"}), flush=True)
            return 4
        appends += 1
        attempts += r["attempts"]
        version += 1
    print(json.dumps({"appends": appends, "attempts": attempts}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
