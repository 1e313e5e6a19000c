"""The engine on an S3 emulator beside the local disk: engine_bench's narrow backlog end to end
(bronze, facts and checkpoint in the bucket), and the latency of a commit's conditional create
per store (storage_bench). Starts moto's S3 server (tests/storage/s3_emulator.py) itself.

    .venv/bin/python bench/storage_bench.py --rows 200000 [--commits 300] [--versions 100000]
        [--store-versions 10000]
"""

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "storage"))
from s3_emulator import S3Emulator  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--versions", type=int, default=100_000)
    parser.add_argument("--store-versions", type=int, default=10_000)
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    args = parser.parse_args()
    emulator = S3Emulator()
    try:
        emulator.client().create_bucket(Bucket="bench")
        env = emulator.env()
        print("End to end, sim to bronze, narrow table, on the local disk and in moto's S3 server:\n")
        subprocess.run([str(ROOT / "build" / "bench" / "engine_bench"), "--rows", str(args.rows),
                        "--dir", args.dir, "--store-uri", "s3://bench/engine"], env=env, check=True)
        print("\nA commit's conditional create, one after another; then a table of many versions "
              "opened beside one listing of its log:\n")
        subprocess.run([str(ROOT / "build" / "bench" / "storage_bench"), "--dir", args.dir,
                        "--commits", str(args.commits), "--versions", str(args.versions),
                        "--store-versions", str(args.store_versions), "--store-uri", "s3://bench/latency"],
                       env=env, check=True)
    finally:
        emulator.stop()


if __name__ == "__main__":
    main()
