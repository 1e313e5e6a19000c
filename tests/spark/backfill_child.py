"""A driver that calls backfill() a wave at a time until the chunked snapshot is done, printing
"ready" once its Spark is up (and, with --open, once its stream opened the snapshot) and
"wave <state> <done>/<total>" after each call; tests/spark/test_backfill_sigkill.py kills it with
SIGKILL at random moments. Only the first driver opens the snapshot, as a user's stream does once;
the drivers after it only resume the waves, which is what the kills are about.

    python tests/spark/backfill_child.py SIM_PATH WORK_DIR [--open]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_spark import local_spark  # noqa: E402


def main():
    sim_path, work = sys.argv[1], Path(sys.argv[2])
    import mssql_cdc

    spark = local_spark("backfill-child", str(work / "warehouse"), snapshot_partitions=2, short_lived=True)
    cdc = mssql_cdc.stream(spark, {"backend": "sim", "simPath": sim_path, "captureInstance": "dbo_customers",
                                   "numPartitions": "2"})
    target, facts, app_id = str(work / "bronze"), str(work / "facts"), "customers-chunked"
    if "--open" in sys.argv[3:]:
        cdc.to_delta(target, app_id, str(work / "ckpt"), facts, bootstrap=True, snapshot="chunked",
                     trigger={"availableNow": True}).awaitTermination()
    print("ready", flush=True)
    while True:
        status = cdc.backfill(target, app_id=app_id, facts_table=facts, chunk_rows=8, max_waves=1,
                              target_wave_seconds=0)
        print(f"wave {status['state']} {status['chunks_done']}/{status['chunks_total']}", flush=True)
        if status["state"] == "done":
            break
    spark.stop()


if __name__ == "__main__":
    main()
