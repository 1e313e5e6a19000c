"""The engine on each object store's emulator beside the local disk: engine_bench's narrow
backlog end to end (bronze, facts and checkpoint in the store), the latency of a commit's
conditional create, and the opening of a table of many versions (storage_bench). Starts moto's
S3 server, Azurite and fake-gcs-server (tests/storage) itself; each store is measured in processes of its own,
beside a local-disk run of the same process.

    .venv/bin/python bench/storage_bench.py --rows 200000 [--commits 300] [--versions 100000]
        [--store-versions 10000] [--stores s3,azure,gcs]
"""

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "storage"))
from azure_emulator import AzureEmulator  # noqa: E402
from gcs_emulator import GcsEmulator  # noqa: E402
from s3_emulator import S3Emulator  # noqa: E402

EMULATORS = {"s3": (S3Emulator, "moto's S3 server"), "azure": (AzureEmulator, "Azurite"),
             "gcs": (GcsEmulator, "fake-gcs-server")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--versions", type=int, default=100_000)
    parser.add_argument("--store-versions", type=int, default=10_000)
    parser.add_argument("--dir", default=str(ROOT / "bench" / "out"))
    parser.add_argument("--stores", default="s3,azure,gcs")
    args = parser.parse_args()
    local_versions = args.versions
    for store in args.stores.split(","):
        make, label = EMULATORS[store]
        emulator = make()
        try:
            emulator.create("bench")
            env = emulator.env()
            print(f"End to end, sim to bronze, narrow table, on the local disk and in {label}:\n")
            subprocess.run([str(ROOT / "build" / "bench" / "engine_bench"), "--rows", str(args.rows),
                            "--dir", args.dir, "--store-uri", emulator.uri("bench") + "/engine"],
                           env=env, check=True)
            print("\nA commit's conditional create, one after another; then a table of many versions "
                  "opened beside one listing of its log:\n")
            subprocess.run([str(ROOT / "build" / "bench" / "storage_bench"), "--dir", args.dir,
                            "--commits", str(args.commits), "--versions", str(local_versions),
                            "--store-versions", str(args.store_versions),
                            "--store-uri", emulator.uri("bench") + "/latency"], env=env, check=True)
            print()
            local_versions = 0  # the local disk's replay is measured once
        finally:
            emulator.stop()


if __name__ == "__main__":
    main()
