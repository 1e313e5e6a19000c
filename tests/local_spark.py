"""A local Spark with Delta for the tests (tests/delta, tests/spark): the Delta jars fetched once
and cached by scripts/setup_spark.sh, and one session configuration, local[2] on 127.0.0.1, used
by a classic session in this process and by a local Spark Connect server alike."""

import contextlib
import glob
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spark_jars():
    """The Delta jars; fetched (once, cached) by scripts/setup_spark.sh."""
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup_spark.sh")], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise RuntimeError(f"scripts/setup_spark.sh failed:\n{result.stderr}")
    folder = result.stdout.strip().splitlines()[-1]
    jars = sorted(glob.glob(os.path.join(folder, "*.jar")))
    if not any(Path(j).name.startswith("delta-spark_") for j in jars):
        raise RuntimeError(f"no delta-spark jar in {folder}")
    return jars


# Every test JVM collects with the serial collector: on two cores G1's concurrent threads compete
# with the work (tests/spark/test_stream.py on the shared session: 278 s of CPU with G1, 259 s
# with the serial collector, 267 s with the parallel one, one run each on 2026-12-07).
JVM_OPTIONS = "-XX:+UseSerialGC"
# A short-lived JVM (a child process a test starts, runs a few steps in and kills or stops) also
# compiles with C1 alone: in its minute or two C2's compilations are over half its CPU and buy
# nothing (43.7 s of 102 s in one measured test; 54 s in all with these). A JVM that serves a
# whole suite (the shared session, the Spark Connect server) keeps C2: with C1 alone the classic
# suite took 2,634 s instead of about 2,100.
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def spark_conf(warehouse, *, driver_memory="1g", snapshot_partitions=2, hive=False, short_lived=False):
    """The session configuration: Delta, local[2] on 127.0.0.1, UTC, the warehouse (and, with
    `hive`, a Hive metastore in an embedded Derby database) under `warehouse`, JVM_OPTIONS; with
    `short_lived`, SHORT_LIVED_JVM_OPTIONS too."""
    conf = {
        "spark.master": "local[2]",
        "spark.jars": ",".join(spark_jars()),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.databricks.delta.snapshotPartitions": str(snapshot_partitions),
        "spark.driver.memory": driver_memory,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse} {JVM_OPTIONS}"
                                         + (f" {SHORT_LIVED_JVM_OPTIONS}" if short_lived else ""),
    }
    if hive:
        conf["spark.sql.catalogImplementation"] = "hive"
        conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
            f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true")
    return conf


def local_spark(app_name, warehouse, *, driver_memory="1g", snapshot_partitions=2, hive=False,
                extra_conf=None, short_lived=False):
    """A new local[2] SparkSession with Delta, its warehouse and Derby home in `warehouse`.

    With `hive`, the session's catalog is a Hive metastore in an embedded Derby database under
    `warehouse`, so that a later session (in another process, once this one stopped) finds the
    tables by name. `extra_conf` adds settings (an object store's, for instance). `short_lived`
    is for a session that lives a test or less (SHORT_LIVED_JVM_OPTIONS); like every JVM option
    it counts only in the process's first session, which starts the JVM every later session of
    the process runs in, so only a child process a test starts passes it.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if hive:
        builder = builder.enableHiveSupport()
    conf = spark_conf(warehouse, driver_memory=driver_memory, snapshot_partitions=snapshot_partitions,
                      hive=hive, short_lived=short_lived)
    conf.update(extra_conf or {})
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def connect_server(warehouse, *, driver_memory="1g", snapshot_partitions=2, hive=False, timeout=180):
    """A local Spark Connect server (PySpark's spark-connect jar, the Delta jars on its class
    path, the configuration of `spark_conf`); yields its sc:// URL and stops it afterwards.

    The same as a user starts with `$SPARK_HOME/sbin/start-connect-server.sh --jars ...`:
    spark-submit with the class org.apache.spark.sql.connect.service.SparkConnectServer.
    """
    import pyspark

    warehouse = Path(warehouse)
    warehouse.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    conf = spark_conf(warehouse, driver_memory=driver_memory, snapshot_partitions=snapshot_partitions, hive=hive)
    conf["spark.connect.grpc.binding.address"] = "127.0.0.1"
    conf["spark.connect.grpc.binding.port"] = str(port)
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    args = [str(submit), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--name", "mssql-cdc-tests-connect"]
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    args.append("spark-internal")
    log_path = warehouse / "connect-server.log"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_REMOTE", None)
    with open(log_path, "w") as log:
        server = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=warehouse, env=env,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while "Spark Connect server started" not in log_path.read_text(errors="replace"):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Spark Connect server did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
