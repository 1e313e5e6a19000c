"""Shared by the `mssql-cdc run` tests: the binary, the demo schema's tables and pipeline files
over a simulated database at shop.sim, with paths relative to the pipeline's own directory."""

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from deltalake import DeltaTable

import mssql_cdc

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("MSSQL_CDC_BIN", str(ROOT / "build" / "mssql-cdc"))
TABLES = ["dbo_customers", "dbo_orders", "dbo_order_items"]
# Microsoft ODBC Driver 18 as PyPI ships it (mssql-python-odbc), as the package finds it; the
# executable under test is given its path.
DRIVER_18 = mssql_cdc._core.bundled_odbc_driver()


class SimServer:
    """`sim serve --port 0` on a database, with more arguments; `port` from its first line."""

    def __init__(self, db, *args, env=None):
        self.process = subprocess.Popen([BINARY, "sim", "serve", "--db", str(db), "--port", "0", *map(str, args)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.process.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line + self.process.stderr.read()
        self.port = int(line.rsplit(":", 1)[1])

    def stop(self):
        """SIGTERM; returns the exit status, what stdout had after the first line, and stderr."""
        self.process.send_signal(signal.SIGTERM)
        rest, err = self.process.communicate(timeout=30)
        return self.process.returncode, rest, err


def pipeline_text(trigger, source, tables=None, stream_extra=None, backend="sim"):
    """A pipeline over the sim database: `source` holds the [source] lines after the backend,
    `tables` the tables line (default: TABLES), `stream_extra` lines after [stream]'s trigger."""
    tables_text = tables if tables is not None else "tables = " + json.dumps(TABLES)
    text = f"""{tables_text}

[source]
backend = "{backend}"
{source}

[stream]
target = "lake/bronze/{{ci}}"
app_id = "{{ci}}-v1"
checkpoint = "checkpoints/{{ci}}"
facts_table = "lake/ops/facts"
control_table = "lake/ops/control"
trigger = "{trigger}"
"""
    if stream_extra is not None:
        text += stream_extra + "\n"
    return text


def change_table_keys(db, ci):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            f'SELECT hex("__$start_lsn"), hex("__$seqval"), "__$operation" FROM "cdc.{ci}_CT"').fetchall()
    return [("0x" + lsn, "0x" + seq, op) for lsn, seq, op in rows]


def bronze_keys(path):
    table = DeltaTable(str(path)).to_pyarrow_table(columns=["_start_lsn", "_seqval", "_operation"])
    return [(r["_start_lsn"], r["_seqval"], r["_operation"]) for r in table.to_pylist() if r["_operation"] != 0]


def run_then_kill(pipeline, rng, low=0.2, high=1.5, env=None):
    """Starts `run --json pipeline`, SIGKILLs it after a random wait between `low` and `high`
    seconds, and returns its exit status; a run that ended before the kill must have ended
    well."""
    run = subprocess.Popen([BINARY, "run", "--json", str(pipeline)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(rng.uniform(low, high))
    run.kill()
    _, stderr = run.communicate(timeout=30)
    assert run.returncode in (-signal.SIGKILL, 0), stderr
    return run.returncode
