"""What the tests that run 0.8.0 beside this package share: a shop database served by `sim
serve` with a login of its own, and a child process of either library's Python, started without
this environment's Python and Spark settings."""

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from sim_serving import serving

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spark"))
from spark_helpers import info, make_shop  # noqa: E402


@contextlib.contextmanager
def served_shop(cli, tmp_path, transactions, seed):
    """Yields (database file, options): the options a job was written with for SQL Server,
    which both libraries read unchanged, logging in to `sim serve` over the database."""
    db = make_shop(cli, tmp_path, transactions=transactions, seed=seed)
    password = f"Job-pw-{seed}"
    cli("sim", "login", "add", "--db", db, "--name", "job", "--password", password, "--db-owner")
    with serving(db) as port:
        yield db, {"connectionString": f"Server=127.0.0.1,{port};Database={info(cli, db)['database']};UID=job;"
                                      f"PWD={password};Encrypt=no"}


def run_child(python, script, *args):
    """Runs `script` with `python` (either library's); its stdout, once it exited with 0."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_REMOTE")}
    done = subprocess.run([python, str(script), *map(str, args)], capture_output=True, text=True, env=env,
                          cwd="/", timeout=600)
    assert done.returncode == 0, f"{python}:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout
