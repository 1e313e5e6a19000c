"""One measured Spark run of bench/silver_bench.py, in a process (and a Spark) of its own: the
same script for our package and the reference (mssql-cdc-pyspark 0.8.0, through its public API
only), each with its own interpreter, since both packages are named `mssql_cdc`.

    python bench/silver_bench_child.py --bronze DIR --changes FILE.parquet --silver DIR
        --control DIR --jars DIR --work DIR --out FILE.json

Starts a local[2] Spark (bench/spark_bench_child.py's session), then: apply_changes onto a new
silver table from bronze's snapshot (the rebuild, which also warms the JVM), the changes
appended to bronze with Spark, and apply_changes again (the incremental apply, the figure the
issue sets a goal for). Writes both times and silver's row count to --out.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spark_bench_child import spark_session  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    for name in ("--bronze", "--changes", "--silver", "--control", "--jars", "--work", "--out"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    spark = spark_session(args.jars, args.work)
    from mssql_cdc import apply_changes

    def apply():
        started = time.monotonic()
        apply_changes(spark, args.bronze, args.silver, capture_instance="dbo_bench", keys=["id"],
                      control_table=args.control)
        return time.monotonic() - started

    rebuild_s = apply()
    spark.read.parquet(args.changes).write.format("delta").mode("append").save(args.bronze)
    apply_s = apply()
    rows = spark.read.format("delta").load(args.silver).count()
    with open(args.out, "w") as out:
        json.dump({"rebuild_s": rebuild_s, "apply_s": apply_s, "rows": rows}, out)
    spark.stop()


if __name__ == "__main__":
    main()
