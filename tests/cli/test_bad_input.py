"""Bad input to the `mssql-cdc` command: every case is refused with the documented exit status
and one line that says what is wrong, and leaves the disk as it was (no table, directory or
checkpoint created or changed).

Each case is data: how it spoils a good pipeline (its text, the checkpoint or a Delta log left
by an earlier good run, the environment, the command line), the exit status, and words the
one line must hold. Cases marked `after_run` start from the state a good run left behind.
"""

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from helpers import BINARY, pipeline_text

GOOD_SOURCE = 'simPath = "shop.sim"\nsourceTimeZone = "UTC"'


@dataclass
class Case:
    name: str
    expect: list[str]  # words the one line holds
    status: int = 2
    edit: Callable[[str], str] = lambda text: text  # of the pipeline text
    spoil: Callable[[Path], None] = lambda root: None  # of the directory after the good run
    args: list[str] | None = None  # the command line; default: run --json pipeline.toml
    env: dict[str, str] = field(default_factory=dict)
    after_run: bool = False
    lines: int = 1  # stderr lines (a warning may come before the error)


def replace(old, new):
    def edit(text):
        assert old in text, old
        return text.replace(old, new)
    return edit


def add_source(line):
    return replace('simPath = "shop.sim"', f'simPath = "shop.sim"\n{line}')


def add_stream(line):
    return replace('trigger = "availableNow"', f'trigger = "availableNow"\n{line}')


def write(relative, contents):
    def spoil(root):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(contents if isinstance(contents, bytes) else contents.encode())
    return spoil


def remove(relative):
    return lambda root: os.remove(root / relative)


CASES = [
    # ---- pipeline files ----
    Case("pipeline path is a directory", ["is a directory", "pipeline.toml"],
         args=["run", "{root}"]),
    Case("pipeline file missing", ["does not exist"], args=["run", "{root}/nope.toml"]),
    Case("not TOML", ["not valid TOML", "line"], edit=lambda t: t + "\n[source\n"),
    Case("unknown section", ["unknown section or key 'extra'"], edit=lambda t: t + "\n[extra]\n"),
    Case("source option at the top", ["'maxCommitsPerBatch' is at the top", "belongs in [source]"],
         edit=lambda t: "maxCommitsPerBatch = 3\n" + t),
    Case("stream key in [source]", ["'control_table' is in [source]", "belongs in [stream]"],
         edit=add_source('control_table = "lake/ops/other"')),
    Case("source option in [stream]", ["'simPath' is in [stream]", "belongs in [source]"],
         edit=add_stream('simPath = "other.sim"')),
    Case("no [source]", ["[source] section is missing"],
         edit=replace('[source]\nbackend = "sim"\n' + GOOD_SOURCE + "\n", "")),
    Case("no target", ["target is missing"], edit=replace('target = "lake/bronze/{ci}"\n', "")),
    Case("target without {ci}", ["target=", "must contain '{ci}'"],
         edit=replace('target = "lake/bronze/{ci}"', 'target = "lake/bronze"')),
    Case("target a table name", ["[stream] target='bronze.{ci}' names a table in a catalog",
                                 "./bronze.{ci}"],
         edit=replace('target = "lake/bronze/{ci}"', 'target = "bronze.{ci}"')),
    Case("facts table a table name", ["[stream] facts_table='ops.ingestion_facts' names a table"],
         edit=replace('facts_table = "lake/ops/facts"', 'facts_table = "ops.ingestion_facts"')),
    Case("control table a table name", ["[stream] control_table='ops.table_finalization' names a table"],
         edit=replace('control_table = "lake/ops/control"', 'control_table = "ops.table_finalization"')),
    Case("app_id without {ci}", ["app_id='v1' must contain '{ci}'"],
         edit=replace('app_id = "{ci}-v1"', 'app_id = "v1"')),
    Case("no tables", ["no tables"], edit=replace('tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]', "")),
    Case("empty table list", ["tables is empty"],
         edit=replace('tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]', "tables = []")),
    Case("table names not strings", ["capture instance names as strings"],
         edit=replace('tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]', "tables = [1, 2]")),
    Case("a table listed twice", ["listed twice"],
         edit=replace('"dbo_orders", "dbo_order_items"]', '"dbo_orders", "DBO_ORDERS"]')),
    Case("a shared parameter set per table", ["shared by every table"],
         edit=lambda t: t.replace('tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]', "")
         + '\n[tables.dbo_orders]\ntarget = "elsewhere/{ci}"\n'),
    Case("unknown trigger", ["trigger"], edit=replace('trigger = "availableNow"', 'trigger = "sometimes"')),
    Case("negative interval", ["trigger"], edit=replace('trigger = "availableNow"', 'trigger = "processingTime=-5 seconds"')),
    Case("unknown granularity", ["granularity"], edit=add_stream('granularity = "fortnight"')),
    Case("unknown to_delta parameter", ["bogus_param"], edit=add_stream("bogus_param = 1")),
    # ---- options ----
    Case("unknown backend", ["backend", "oracle"], edit=replace('backend = "sim"', 'backend = "oracle"')),
    Case("maxCommitsPerBatch 0", ["maxCommitsPerBatch"], edit=add_source("maxCommitsPerBatch = 0")),
    Case("maxCommitsPerBatch not a number", ["maxCommitsPerBatch", "'ten'"],
         edit=add_source('maxCommitsPerBatch = "ten"')),
    Case("negative numPartitions", ["numPartitions"], edit=add_source("numPartitions = -1")),
    Case("boolean spelt oddly", ["failOnDataLoss must be a boolean", "'maybe'"],
         edit=add_source('failOnDataLoss = "maybe"')),
    Case("unknown sourceTimeZone", ["Mars Standard Time"],
         edit=replace('sourceTimeZone = "UTC"', 'sourceTimeZone = "Mars Standard Time"')),
    Case("malformed startingLsn", ["startingLsn"], edit=add_source('startingLsn = "0xZZ"')),
    Case("startingLsn past the max LSN", ["past the database's max LSN"],
         edit=add_source('startingLsn = "0xFFFFFFFF000000000001"')),
    Case("startingLsn before the instance began", ["before capture instance", "began"],
         edit=add_source('startingLsn = "0x00000000000000000001"')),
    Case("bootstrap with startingLsn", ["bootstrap", "startingLsn"],
         edit=lambda t: add_stream("bootstrap = true")(add_source('startingLsn = "latest"')(t))),
    Case("missing capture instance", ["dbo_nope"],
         edit=replace('"dbo_orders", "dbo_order_items"]', '"dbo_nope", "dbo_order_items"]')),
    Case("simPath missing", ["nowhere.sim"], edit=replace('simPath = "shop.sim"', 'simPath = "nowhere.sim"')),
    Case("simPath not a simulated database", ["is not a mssql-cdc sim database"],
         edit=replace('simPath = "shop.sim"', 'simPath = "pipeline.toml"')),
    Case("secret variable unset", ["MSSQL_CDC_TEST_UNSET_VAR", "not set"],
         edit=add_source('password_env = "MSSQL_CDC_TEST_UNSET_VAR"')),
    Case("control characters are escaped", ["'dbo\\nnope\\x01'"],
         edit=replace('"dbo_orders", "dbo_order_items"]', '"dbo\\nnope\\u0001", "dbo_order_items"]')),
    Case("a long value is cut with its length", ["...' (5000 bytes)"],
         edit=replace('"dbo_orders", "dbo_order_items"]', '"' + "x" * 5000 + '", "dbo_order_items"]')),
    Case("bytes that are not UTF-8 are escaped", ["\\xFF"], env={"MSSQL_CDC_TEST_TZ": "UTC\udcff"},
         edit=replace('sourceTimeZone = "UTC"', 'sourceTimeZone_env = "MSSQL_CDC_TEST_TZ"')),
    # ---- [engine]: what the process may use ----
    Case("memory budget too small for a row", ["memory_budget = 1 MiB is too small for one row",
                                               "'dbo_customers'", "give memory_budget at least"],
         edit=lambda t: t + '\n[engine]\nmemory_budget = "1 MiB"\n'),
    Case("memory budget without a unit", ["memory_budget = '512'", "has no unit"],
         edit=lambda t: t + '\n[engine]\nmemory_budget = 512\n'),
    Case("memory budget in an ambiguous unit", ["memory_budget = '512 mb'", "'mb'", "MiB"],
         edit=lambda t: t + '\n[engine]\nmemory_budget = "512 mb"\n'),
    Case("unknown [engine] key", ["unknown [engine] key 'threads'", "workers"],
         edit=lambda t: t + '\n[engine]\nthreads = 4\n'),
    Case("numPartitions larger than the connection pool",
         ["numPartitions = 8 is more than [engine] connections = 4", "lower numPartitions"],
         edit=lambda t: add_source("numPartitions = 8")(t) + '\n[engine]\nconnections = 4\n'),
    Case("more tables than max_streams", ["3 tables are more than [engine] max_streams = 2"],
         edit=lambda t: t + '\n[engine]\nmax_streams = 2\n'),
    # ---- tables and checkpoints that do not fit together ----
    Case("facts_table equal to control_table", ["same location"],
         edit=replace('control_table = "lake/ops/control"', 'control_table = "lake/ops/facts"')),
    Case("a target equal to the facts table", ["same location"],
         edit=replace('facts_table = "lake/ops/facts"', 'facts_table = "lake/bronze/dbo_orders"')),
    Case("checkpoint equal to target", ["same location"],
         edit=replace('checkpoint = "checkpoints/{ci}"', 'checkpoint = "lake/bronze/{ci}"')),
    Case("checkpoint is a file", ["exists and is not a directory"],
         spoil=write("checkpoints/dbo_orders", "x")),
    # The second table's bronze: the first table's must not be written before the refusal.
    Case("bronze target is a file", ["bronze table", "lake/bronze/dbo_orders", "exists and is not a directory"],
         spoil=write("lake/bronze/dbo_orders", "x")),
    Case("a folder above the facts table is a file", ["facts table", "a folder above it", "is not a directory"],
         spoil=write("lake/ops", "x")),
    Case("misspelt key in a table's section",
         ["unknown key 'numPartitons' in [tables.dbo_orders]", "did you mean 'numPartitions'?"],
         edit=replace('tables = ["dbo_customers", "dbo_orders", "dbo_order_items"]',
                      '[tables.dbo_customers]\n[tables.dbo_orders]\nnumPartitons = 2\n')),
    Case("misspelt key in [source]", ["unknown key 'maxCommitsPerBach' in [source]", "did you mean 'maxCommitsPerBatch'?"],
         edit=add_source("maxCommitsPerBach = 5")),
    Case("checkpoint of another app_id", ["belongs to app_id 'other-app'"], after_run=True,
         spoil=write("checkpoints/dbo_orders/stream.json",
                     '{"app_id": "other-app", "capture_instance": "dbo_orders", "target": "lake/bronze/dbo_orders"}')),
    Case("checkpoint of another target", ["belongs to target"], after_run=True,
         spoil=write("checkpoints/dbo_orders/stream.json",
                     '{"app_id": "dbo_orders-v1", "capture_instance": "dbo_orders", "target": "elsewhere"}')),
    Case("checkpoint batch id of 20 digits", ["out of range"], after_run=True,
         spoil=write("checkpoints/dbo_order_items/offsets/99999999999999999999.json", "{}")),
    Case("checkpoint offsets not JSON", ["is not a JSON object"], after_run=True,
         spoil=write("checkpoints/dbo_order_items/offsets/0.json", "not json")),
    Case("checkpoint offsets of another batch", ["holds batch 7"], after_run=True,
         spoil=write("checkpoints/dbo_order_items/offsets/0.json",
                     '{"batch_id": 7, "start": {"lsn": "0x01"}, "end": {"lsn": "0x02"}}')),
    Case("checkpoint start not an offset", ["\"start\" is not an offset"], after_run=True,
         spoil=write("checkpoints/dbo_orders/start.json", '{"start": {"lsn": "nope"}}')),
    # ---- Delta logs ----
    Case("bronze commit not JSON", ["00000000000000000001.json"], after_run=True,
         spoil=write("lake/bronze/dbo_orders/_delta_log/00000000000000000001.json", "{not json")),
    Case("bronze commit missing in the middle", ["00000000000000000001.json"], after_run=True,
         spoil=lambda root: (shutil.copy(root / "lake/bronze/dbo_orders/_delta_log/00000000000000000001.json",
                                          root / "lake/bronze/dbo_orders/_delta_log/00000000000000000002.json"),
                             os.remove(root / "lake/bronze/dbo_orders/_delta_log/00000000000000000001.json"))),
    Case("bronze data file deleted by hand", ["bronze table", "dbo_orders", "1 data file(s) that are missing",
                                              "bootstrap = true"], after_run=True,
         spoil=lambda root: os.remove(sorted((root / "lake/bronze/dbo_orders").glob("*.parquet"))[0])),
    Case("[backfill] chunk_rows of 0", ["[backfill] chunk_rows = '0'", "at least 1"],
         edit=lambda t: add_stream('bootstrap = true\nsnapshot = "chunked"')(t) + '\n[backfill]\nchunk_rows = 0\n'),
    Case("unknown [backfill] key", ["unknown [backfill] key 'waves'", "chunk_rows"],
         edit=lambda t: t + '\n[backfill]\nwaves = 3\n'),
    Case("chunked snapshot without a facts table", ["snapshot=\"chunked\" needs facts_table"],
         edit=lambda t: add_stream('bootstrap = true\nsnapshot = "chunked"')(
             replace('facts_table = "lake/ops/facts"\n', '')(t))),
    Case("resnapshot without a facts table", ["on_data_loss=\"resnapshot\" needs facts_table"],
         edit=lambda t: add_stream('on_data_loss = "resnapshot"')(replace('facts_table = "lake/ops/facts"\n', '')(t))),
    Case("facts table that is not a facts table", ["not a facts table"],
         edit=replace('facts_table = "lake/ops/facts"', 'facts_table = "lake/other_bronze"'),
         spoil=lambda root: shutil.copytree(root / "seed_bronze", root / "lake/other_bronze")),
    Case("control table that is not a control table", ["not a control table"],
         edit=replace('control_table = "lake/ops/control"', 'control_table = "lake/other_bronze"'),
         spoil=lambda root: shutil.copytree(root / "seed_bronze", root / "lake/other_bronze")),
    # ---- command line ----
    Case("run without a pipeline", ["pipeline is required"], args=["run"]),
    Case("run with two pipelines", ["not expected"], args=["run", "{root}/pipeline.toml", "b"]),
    Case("negative timeout, no range of a double", ["--timeout", "greater than 0", "'-1'"],
         args=["run", "--timeout", "-1", "{root}/pipeline.toml"]),
    Case("timeout that is not a number", ["--timeout", "'abc'"],
         args=["run", "--timeout", "abc", "{root}/pipeline.toml"]),
    Case("unknown flag", ["--bogus"], args=["run", "--bogus", "{root}/pipeline.toml"]),
    Case("no subcommand", ["subcommand"], args=[]),
    Case("status of a missing pipeline", ["does not exist"], args=["status", "{root}/nope.toml"]),
    # ---- the simulator and sim serve ----
    Case("sim workload at 0 tps", ["transactions per second must be more than 0"], args=["sim", "workload", "--db", "{root}/shop.sim", "--tps", "0", "--transactions", "1"]),
    Case("sim serve port out of range", ["--port"], args=["sim", "serve", "--db", "{root}/shop.sim", "--port", "70000"]),
    Case("sim serve of a missing file", ["nowhere.sim"], args=["sim", "serve", "--db", "{root}/nowhere.sim", "--port", "0"]),
    Case("sim serve on a port in use", ["cannot listen on 127.0.0.1:"],
         args=["sim", "serve", "--db", "{root}/shop.sim", "--port", "{busy_port}"]),
]


def snapshot(root):
    """Every file under root with a hash of its contents; the simulator's WAL files excluded
    (a reader opening the database may touch them)."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.endswith(("-wal", "-shm")):
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            files[str(path.relative_to(root)) + "/"] = "dir"
    return files


@pytest.fixture(scope="module")
def seeded(tmp_path_factory, cli):
    """A database, a good pipeline, and a bronze table to put where another table belongs."""
    root = tmp_path_factory.mktemp("seed")
    db = root / "shop.sim"
    cli("sim", "create", "--db", db, "--clock", "manual", "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--tps", 100, "--transactions", 60, "--seed", 3)
    (root / "pipeline.toml").write_text(pipeline_text("availableNow", GOOD_SOURCE))
    scratch = tmp_path_factory.mktemp("scratch")
    shutil.copytree(root, scratch, dirs_exist_ok=True)
    cli("run", "--json", scratch / "pipeline.toml")
    shutil.copytree(scratch / "lake" / "bronze" / "dbo_orders", root / "seed_bronze")
    return root


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_refused_in_one_line_and_changes_nothing(case, seeded, cli, tmp_path):
    root = tmp_path / "work"
    shutil.copytree(seeded, root)
    if case.after_run:  # a good run, then more changes for the next one to read
        cli("run", "--json", root / "pipeline.toml")
        cli("sim", "workload", "--db", root / "shop.sim", "--tps", 100, "--transactions", 20,
            "--seed", 4)
    pipeline = root / "pipeline.toml"
    pipeline.write_text(case.edit(pipeline.read_text()))
    case.spoil(root)
    busy = None
    args = case.args if case.args is not None else ["run", "--json", "{root}/pipeline.toml"]
    if any("{busy_port}" in a for a in args):
        import socket
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
    try:
        args = [a.format(root=root, busy_port=busy.getsockname()[1] if busy else 0) for a in args]
        before = snapshot(root)
        env = dict(os.environ)
        for name, value in case.env.items():
            env[name] = value
        env = {k: os.fsencode(v) if isinstance(v, str) else v for k, v in env.items()}
        result = subprocess.run([BINARY, *args], capture_output=True, timeout=60, env=env, cwd=root)
    finally:
        if busy:
            busy.close()
    stderr = result.stderr.decode("utf-8", "backslashreplace")
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert result.returncode == case.status, stderr
    assert len(lines) == case.lines, stderr
    message = lines[-1]
    for words in case.expect:
        assert words in message, message
    assert "stoll" not in message and "std::" not in message, message
    assert snapshot(root) == before
