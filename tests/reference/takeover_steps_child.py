"""Steps of a job, with whichever `mssql_cdc` this Python has: ours, or mssql-cdc-pyspark 0.8.0
in its own venv. test_takeover_snapshots.py runs them in turn on the same tables, at paths.
Prints {"outcome": {step: None or "<error type>: <message>"}, "files": [the files under bronze
and facts before the first step, then after each]} as JSON on its last line; a step given
again is keyed "<step> (2)", "<step> (3)", ...

    python tests/reference/takeover_steps_child.py WORK_DIR OPTIONS_JSON STEP...

Steps (each availableNow): open:<ci> (to_delta with a chunked bootstrap, then one wave of
backfill), chunked:<ci> (to_delta with a chunked bootstrap), wave:<ci> (one wave of backfill,
which leaves chunks to read), backfill:<ci> (until done), stream:<ci> (to_delta from the start
of the change tables), widen:<ci> (turn type widening on in bronze), run:<file> (run each
command of the JSON list of argument lists in <file>: what the source's DBA does between two
steps, without a new Spark driver for the steps after it). A <ci> written <ci>@name
keeps its bronze table named bronze.<ci> in a Hive metastore under WORK_DIR, which every run of
either library opens in turn; the others are at paths.
"""

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_spark import local_spark  # noqa: E402


def files(work):
    """The files of bronze and facts, with their sizes: what "nothing was written" compares."""
    return sorted((str(p.relative_to(work)), p.stat().st_size) for where in ("bronze", "facts", "warehouse/bronze.db")
                  for p in (work / where).rglob("*") if p.is_file())


def main():
    work, options, steps = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3:]
    from mssql_cdc import stream

    spark = local_spark("takeover-steps", str(work / "warehouse"), hive=True, short_lived=True)
    spark.sql("CREATE SCHEMA IF NOT EXISTS bronze")
    outcome, written = {}, [files(work)]
    for turn, step in enumerate(steps):
        kind, ci = step.split(":", 1)
        if step in outcome:
            step = f"{step} ({steps[:turn].count(step) + 1})"
        if kind == "run":
            outcome[step] = None
            for command in json.loads(Path(ci).read_text()):
                done = subprocess.run(command, capture_output=True, text=True, timeout=300)
                if done.returncode != 0:
                    outcome[step] = f"{command[1:3]} exited with {done.returncode}: {done.stderr[-2000:]}"
                    break
            written.append(files(work))
            continue
        ci, named = ci.removesuffix("@name"), ci.endswith("@name")
        args = dict(target=f"bronze.{ci}" if named else str(work / "bronze" / ci), app_id=f"{ci}-v1",
                    facts=str(work / "facts"))
        source = stream(spark, dict(options, captureInstance=ci))
        try:
            if kind in ("open", "chunked", "stream"):
                chunked = {"bootstrap": True, "snapshot": "chunked"} if kind != "stream" else {}
                query = source.to_delta(args["target"], args["app_id"], str(work / "checkpoints" / ci), args["facts"],
                                        trigger={"availableNow": True}, **chunked)
                query.awaitTermination()
                if query.exception() is not None:
                    raise query.exception()
            if kind in ("open", "wave", "backfill"):
                status = source.backfill(args["target"], app_id=args["app_id"], facts_table=args["facts"],
                                         chunk_rows=2, max_waves=None if kind == "backfill" else 1,
                                         target_wave_seconds=0)
                assert status["state"] == ("done" if kind == "backfill" else "running"), status
            if kind == "widen":
                spark.sql(f"ALTER TABLE delta.`{args['target']}` SET TBLPROPERTIES "
                          "('delta.enableTypeWidening' = 'true')")
            outcome[step] = None
        except Exception as error:  # noqa: BLE001 (reported to the test, which decides)
            outcome[step] = f"{type(error).__name__}: {str(error)[:3000]}"
        written.append(files(work))
    spark.stop()
    print(json.dumps({"outcome": outcome, "files": written}))


if __name__ == "__main__":
    main()
