"""One availableNow run of a many-tables job, with whichever `mssql_cdc` this Python has: ours,
or mssql-cdc-pyspark 0.8.0 in its own venv. test_takeover.py runs the two in turn on the same
tables. Prints the failures as JSON on its last line; exits 1 when a table failed.

    python tests/reference/takeover_child.py WORK_DIR OPTIONS_JSON TABLES_JSON [--names]

With --names the tables are named in a Hive metastore kept in WORK_DIR (bronze.<ci>,
ops.ingestion_facts), which every run of either library opens in turn.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_spark import local_spark  # noqa: E402


def main():
    work, options, tables = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
    names = "--names" in sys.argv[4:]
    from mssql_cdc import await_all, start_many

    spark = local_spark("takeover-child", str(work / "warehouse"), hive=names, short_lived=True)
    if names:
        for schema in ("bronze", "ops"):
            spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    queries = start_many(spark, options, tables,
                         target="bronze.{ci}" if names else str(work / "bronze" / "{ci}"), app_id="{ci}-v1",
                         checkpoint=str(work / "checkpoints" / "{ci}"),
                         facts_table="ops.ingestion_facts" if names else str(work / "facts"),
                         trigger={"availableNow": True})
    failed = {ci: str(error)[:2000] for ci, error in await_all(queries).items()}
    spark.stop()
    print(json.dumps(failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
