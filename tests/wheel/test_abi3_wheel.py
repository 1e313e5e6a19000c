"""The cp312-abi3 wheel (`make wheel PYTHON=python3.12`), one file for Python 3.12 and every
later version, installed with pip into a fresh virtual environment of each such Python this
machine has, and used there: `import mssql_cdc`, the `mssql-cdc` command's demo, and on 3.12
(Databricks runtime 18's Python) a Spark-mode stream on PySpark with the Delta jars.

scripts/test.sh builds the wheel and names it, and the Pythons, in MSSQL_CDC_ABI3_WHEEL and
MSSQL_CDC_ABI3_PYTHONS (colon-separated)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from helpers import bronze_keys, change_table_keys  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PYTHONS = [p for p in os.environ.get("MSSQL_CDC_ABI3_PYTHONS", "").split(":") if p]


def test_scripts_test_sh_named_the_wheel_and_the_pythons():
    assert Path(os.environ.get("MSSQL_CDC_ABI3_WHEEL", "")).is_file() and PYTHONS, \
        "run through scripts/test.sh (make test), which builds the abi3 wheel with a Python 3.12 or later"


@pytest.mark.parametrize("python", PYTHONS)
def test_the_abi3_wheel_installs_and_runs_on(python, tmp_path):
    wheel = os.environ["MSSQL_CDC_ABI3_WHEEL"]
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    minor = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys; print(sys.version_info[1])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    extra = ["pyspark==4.2.1"] if minor == "12" else []
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", wheel, *extra], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED",
                                                              "PYTHONPATH", "MSSQL_CDC_BIN")}
    bin_dir = venv / "bin"
    imported = subprocess.run([str(bin_dir / "python"), "-c", "import mssql_cdc; print(mssql_cdc.__version__)"],
                              capture_output=True, text=True, env=env)
    assert imported.returncode == 0 and imported.stdout.startswith("0."), imported.stderr
    demo = subprocess.run([str(bin_dir / "mssql-cdc"), "demo", "--dir", str(tmp_path / "demo")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert demo.returncode == 0, demo.stderr
    assert (tmp_path / "demo" / "lake" / "bronze").is_dir()
    if minor != "12":
        return
    db = tmp_path / "shop.sim"
    for args in (["sim", "create", "--db", db], ["sim", "demo-schema", "--db", db],
                 ["sim", "workload", "--db", db, "--transactions", 30, "--seed", 4]):
        subprocess.run([str(bin_dir / "mssql-cdc"), *map(str, args)], check=True, capture_output=True, env=env)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO / "tests")!r})
        from local_spark import local_spark
        from mssql_cdc import stream
        spark = local_spark("abi3", {str(tmp_path / "warehouse")!r})
        query = stream(spark, {{"backend": "sim", "simPath": {str(db)!r}, "captureInstance": "dbo_orders"}}) \\
            .to_delta({str(tmp_path / "bronze")!r}, "orders-v1", {str(tmp_path / "ckpt")!r},
                      trigger={{"availableNow": True}})
        query.awaitTermination()
        spark.stop()
    """)
    env["PYSPARK_PYTHON"] = str(bin_dir / "python")
    spark = subprocess.run([str(bin_dir / "python"), "-c", script], capture_output=True, text=True, env=env,
                           timeout=600)
    assert spark.returncode == 0, spark.stderr[-3000:]
    assert sorted(bronze_keys(tmp_path / "bronze")) == sorted(change_table_keys(db, "dbo_orders"))
