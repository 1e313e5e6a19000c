"""The wheel `make wheel` built, installed with pip into a fresh virtual environment in a
minimal Debian 12 root made for the test (scripts/debian_root.sh: python3, python3-venv, the
system libraries docs/install.md lists for ODBC Driver 18, a Java runtime for Spark; no
compiler, no development package), and used there as a user would: `import mssql_cdc`, the
`mssql-cdc` command's demo, an odbc-backend stream through `sim serve` over TLS with the
Driver 18 that comes with the wheel's dependencies (no Driver keyword, no odbcinst.ini), and
a Spark-mode stream on PySpark with the Delta jars. The tables are read back here, outside.

scripts/test.sh builds the wheel and names it in MSSQL_CDC_WHEEL."""

import hashlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from helpers import bronze_keys, change_table_keys  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# What a Spark-mode user has beside the wheel: PySpark (Databricks brings its own). Kept in a
# virtual environment of the root between runs while this list is the same.
SPARK_REQUIREMENTS = "pyspark==4.2.1\n"
JARS = Path(subprocess.run(["bash", str(REPO / "scripts" / "setup_spark.sh")], capture_output=True, text=True,
                           check=True).stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def wheel():
    path = os.environ.get("MSSQL_CDC_WHEEL")
    assert path and Path(path).is_file(), "MSSQL_CDC_WHEEL names no wheel: run through scripts/test.sh (make test)"
    return Path(path)


@pytest.fixture(scope="module")
def root():
    made = subprocess.run([str(REPO / "scripts" / "debian_root.sh")], capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stderr[-3000:]
    path = Path(made.stdout.strip().splitlines()[-1])
    # This machine's network settings, as an installed system has its own: pip reaches the
    # index, and the machine's name resolves (Spark's driver looks itself up).
    shutil.copyfile("/etc/resolv.conf", path / "etc" / "resolv.conf")
    (path / "etc" / "hosts").write_text(f"127.0.0.1\tlocalhost {socket.gethostname()}\n::1\tlocalhost ip6-localhost\n")
    return path


def in_root(root, script, binds, timeout=900):
    """Runs `script` with bash in a chroot of `root`, in a mount namespace of its own (so the
    mounts go with it), `binds` mapping host folders to folders inside."""
    mounts = ["mount -t proc proc {r}/proc", "mount --rbind /dev {r}/dev"]
    for host, inside in binds.items():
        mounts.append(f"mkdir -p {{r}}{inside} && mount --bind {host} {{r}}{inside}")
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    # pip inside reaches the package index the way pip outside does: its index and, where this
    # machine's network needs one, its CA bundle.
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_DEFAULT_TIMEOUT"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    if os.environ.get("PIP_CERT"):
        mounts.append(f"touch {{r}}/etc/pip-ca.crt && mount --bind {os.environ['PIP_CERT']} {{r}}/etc/pip-ca.crt")
        env["PIP_CERT"] = "/etc/pip-ca.crt"
    setup = " && ".join(m.format(r=root) for m in mounts)
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                           f"{setup} && exec chroot {root} /bin/bash -euo pipefail -c {shlex.quote(script)}"],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_the_wheel_installs_and_runs_where_nothing_was_built(wheel, root, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(wheel, work / wheel.name)
    spark_venv = "/opt/spark-venv-" + hashlib.sha256(SPARK_REQUIREMENTS.encode()).hexdigest()[:12]
    spark_script = textwrap.dedent("""
        import sys
        sys.path.insert(0, "/repo/tests")
        from local_spark import local_spark
        from mssql_cdc import stream
        spark = local_spark("wheel", "/work/warehouse")
        query = stream(spark, {"backend": "sim", "simPath": "/work/shop.sim", "captureInstance": "dbo_orders"}) \\
            .to_delta("/work/spark/bronze", "orders-v1", "/work/spark/ckpt", trigger={"availableNow": True})
        query.awaitTermination()
        print("spark rows", spark.read.format("delta").load("/work/spark/bronze").count())
        spark.stop()
    """)
    (work / "spark_stream.py").write_text(spark_script)
    (work / "pipeline.toml").write_text(textwrap.dedent("""
        tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]
        [source]
        backend = "odbc"
        connectionString = "Server=127.0.0.1,PORT;Database=sim;Encrypt=yes;HostNameInCertificate=localhost"
        user = "reader"
        password_env = "READER_PW"
        [stream]
        target = "lake/bronze/{ci}"
        app_id = "{ci}-v1"
        checkpoint = "checkpoints/{ci}"
        facts_table = "lake/ops/facts"
        control_table = "lake/ops/control"
        trigger = "availableNow"
    """))
    script = f"""
        cd /work
        # PySpark, which a Spark-mode user has already, kept between runs in a folder of the
        # root and seen by the fresh environment through a .pth file.
        if [ ! -d {spark_venv} ]; then
          python3 -m venv {spark_venv}.tmp
          {spark_venv}.tmp/bin/pip install -q {SPARK_REQUIREMENTS.strip()}
          mv {spark_venv}.tmp {spark_venv}
        fi
        python3 -m venv /work/venv
        ls -d {spark_venv}/lib/python3*/site-packages > "$(ls -d /work/venv/lib/python3*/site-packages)/pyspark.pth"
        /work/venv/bin/pip install -q /work/{wheel.name}
        . /work/venv/bin/activate
        python -c "import mssql_cdc; print('imported', mssql_cdc.__version__, mssql_cdc._core.bundled_odbc_driver())"
        mssql-cdc --version
        mssql-cdc demo --dir /work/demo > /work/demo.out
        # A simulated SQL Server over TLS, and a pipeline reading it through Driver 18.
        mssql-cdc sim create --db /work/shop.sim
        mssql-cdc sim demo-schema --db /work/shop.sim
        mssql-cdc sim workload --db /work/shop.sim --transactions 40 --seed 3
        READER_PW='Wheel-pw-1!' mssql-cdc sim login add --db /work/shop.sim --name reader --password-env READER_PW --db-owner
        mssql-cdc sim tls-cert --host localhost --out-dir /work/certs
        mssql-cdc sim serve --db /work/shop.sim --port 0 --tls-cert /work/certs/server.pem \
          --tls-key /work/certs/server.key > /work/serve.out 2> /work/serve.err &
        for i in $(seq 100); do grep -q listening /work/serve.out && break; sleep 0.1; done
        port=$(sed -n 's/.*://p' /work/serve.out | head -1)
        sed -i "s/PORT/$port/" /work/pipeline.toml
        READER_PW='Wheel-pw-1!' SSL_CERT_FILE=/work/certs/ca.pem mssql-cdc run --json /work/pipeline.toml > /work/run.out
        kill %1
        python /work/spark_stream.py
    """
    done = in_root(root, script, {str(work): "/work", str(REPO): "/repo", str(JARS): str(JARS),
                                  str(Path.home() / ".cache" / "pip"): "/root/.cache/pip"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    out = done.stdout
    assert "imported 0." in out and "libmsodbcsql-18" in out, out
    assert "mssql-cdc 0." in out
    assert "spark rows" in out
    for ci in ("dbo_customers", "dbo_orders", "dbo_order_items"):
        assert sorted(bronze_keys(work / "lake" / "bronze" / ci)) == sorted(change_table_keys(work / "shop.sim", ci)), ci
    assert sorted(bronze_keys(work / "spark" / "bronze")) == sorted(change_table_keys(work / "shop.sim", "dbo_orders"))
    assert (work / "demo").is_dir()
