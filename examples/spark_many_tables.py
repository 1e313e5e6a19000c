"""Three tables of the demo shop database into Delta on Spark, then each table's verdict.

Try it on the simulated SQL Server (paths relative to the current directory):

    mssql-cdc sim create --db shop.sim
    mssql-cdc sim demo-schema --db shop.sim
    mssql-cdc sim workload --db shop.sim --tps 100 --duration 10
    python examples/spark_many_tables.py --sim shop.sim --lake lake

Run it again after more workload: each table goes on from its checkpoint. With a real SQL
Server, pass --connection-string (the user and password come from CDC_USER and CDC_PASSWORD).
Spark needs the Delta jars (scripts/setup_spark.sh fetches them). See docs/spark.md.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
from typing import Any

from mssql_cdc import await_all, finalization, start_many

TABLES = ["dbo_orders", "dbo_order_items", "dbo_customers"]


def run(spark: Any, options: dict[str, str], lake: str) -> dict[str, Exception]:
    """Catches every table up (availableNow), advances each verdict; returns the failures."""
    queries = start_many(
        spark,
        options,
        TABLES,
        target=f"{lake}/bronze/{{ci}}",
        app_id="{ci}-v1",
        checkpoint=f"{lake}/checkpoints/{{ci}}",
        facts_table=f"{lake}/ops/ingestion_facts",
        trigger={"availableNow": True},
    )
    failed = await_all(queries)
    for ci, query in queries.items():
        if ci not in failed:
            end = finalization.end_offset_from_progress(query.lastProgress)
            verdict = finalization.advance(spark, f"{lake}/ops/table_finalization", f"bronze.{ci}", end)
            print(f"{ci}: finalized until {verdict}")
    for ci, error in failed.items():
        print(f"{ci} failed: {str(error).splitlines()[0]}", file=sys.stderr)
    return failed


def local_spark() -> Any:
    """A local Spark session with Delta (the jars scripts/setup_spark.sh fetches)."""
    from pyspark.sql import SparkSession

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = subprocess.run(["bash", os.path.join(root, "scripts", "setup_spark.sh")], check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master("local[*]")
        .appName("mssql-cdc-many-tables")
        .config("spark.jars", ",".join(sorted(glob.glob(os.path.join(folder, "*.jar")))))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.databricks.delta.snapshotPartitions", "4")  # small local tables
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--sim", help="a simulated database file")
    source.add_argument("--connection-string", help="Server=host,1433;Database=db;Encrypt=yes")
    parser.add_argument("--lake", required=True, help="the folder of the Delta tables and checkpoints")
    args = parser.parse_args()
    if args.sim:
        options = {"backend": "sim", "simPath": os.path.abspath(args.sim)}
    else:
        options = {"connectionString": args.connection_string, "user": os.environ["CDC_USER"],
                   "password": os.environ["CDC_PASSWORD"]}
    spark = local_spark()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        failed = run(spark, options, os.path.abspath(args.lake))
    finally:
        spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
