"""A driver that streams dbo.orders into bronze and starts the query again whenever it stops at a
newer capture instance (is_schema_changed), as a job restarting on that error does; it prints
"started" each time a query runs. tests/spark/test_switch_sigkill.py kills it with SIGKILL at
random moments. With "final" it runs availableNow queries until one ends without that error.

    python tests/spark/switch_child.py SIM_PATH WORK_DIR [final]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_spark import local_spark  # noqa: E402


def main():
    sim_path, work = sys.argv[1], Path(sys.argv[2])
    final = sys.argv[3:] == ["final"]
    from mssql_cdc import is_schema_changed, stream

    spark = local_spark("switch-child", str(work / "warehouse"), short_lived=True)
    # Small batches while it is killed, so that kills fall inside batches; the final run catches up.
    options = {"backend": "sim", "simPath": sim_path, "captureInstance": "dbo_orders",
               "maxCommitsPerBatch": "1000" if final else "100"}
    trigger = {"availableNow": True} if final else {"processingTime": "100 milliseconds"}
    while True:
        query = stream(spark, options).to_delta(str(work / "bronze"), "orders-crash", str(work / "ckpt"),
                                                str(work / "facts"), trigger=trigger)
        print("started", flush=True)
        try:
            query.awaitTermination()
            error = None
        except Exception as e:  # noqa: BLE001 (the query's StreamingQueryException)
            error = e
        if error is None:
            break
        if not is_schema_changed(error):
            raise error
        print("restart after the switch", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
