"""One stream on Spark: stream(spark, options).to_delta(...) over simulated databases, its bronze
and facts read back with the engine's reader: every change once, the native engine's bronze
schema, micro-batches of maxCommitsPerBatch commits, exactly once under replays, the hand-over
from a stream the native engine started, data loss, bootstrap, and the arguments refused
before anything starts."""

import json
import shutil
from pathlib import Path

import pytest
from pyspark.sql.types import StructType
from spark_helpers import (ROOT, assert_bronze_equals_change_table, change_table, delta, info, sim_options,
                           workload)

from mssql_cdc import _core


def commit_infos(table):
    """The commitInfo of every version of a Delta table, by version."""
    out = {}
    for path in sorted(Path(table, "_delta_log").glob("*.json")):
        for line in path.read_text().splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                out[int(path.stem)] = action["commitInfo"]
    return out


@pytest.mark.connect
def test_to_delta_refuses_bad_arguments_before_starting_anything(spark, shop, tmp_path, capfd):
    from mssql_cdc import ConfigError, NotFoundError, stream

    options = dict(sim_options(shop), captureInstance="dbo_orders")
    ckpt = tmp_path / "ckpt"
    cdc = stream(spark, options)
    with pytest.raises(TypeError):
        cdc.to_delta(f"{tmp_path}/t", "app", str(ckpt), None, {"availableNow": True})
    refusals = [
        (dict(on_data_loss="sometimes"), "on_data_loss"),
        (dict(snapshot="partial"), "snapshot"),
        (dict(on_data_loss="resnapshot"), "needs facts_table"),
        (dict(snapshot="chunked"), "needs facts_table"),
        (dict(snapshot_on_switch="yes"), "snapshot_on_switch must be True or False"),
        (dict(trigger="availableNow"), "trigger"),
    ]
    for kwargs, message in refusals:
        with pytest.raises(ValueError, match=message):
            cdc.to_delta(f"{tmp_path}/t", "app", str(ckpt), **kwargs)
    with pytest.raises(ValueError, match="startingLsn"):
        stream(spark, dict(options, STARTINGLSN="latest")).to_delta(f"{tmp_path}/t", "app", str(ckpt),
                                                                   bootstrap=True)
    with pytest.raises(ConfigError, match="maxCommitsPerBatch"):
        stream(spark, dict(options, maxCommitsPerBatch="0")).to_delta(f"{tmp_path}/t", "app", str(ckpt))
    capfd.readouterr()
    with pytest.raises(NotFoundError, match="dbo_nope"):
        stream(spark, dict(options, captureInstance="dbo_nope", bogusOptionOfRefusals="1")).to_delta(
            f"{tmp_path}/t", "app", str(ckpt))
    # The engine warns about an unknown option name when it parses the options.
    assert "unknown source option 'bogusOptionOfRefusals'" in "".join(capfd.readouterr())
    # A metrics directory pyarrow.fs cannot open, or that cannot be written.
    (tmp_path / "a-file").write_text("")
    for metrics, message in (("dbfs:/mnt/metrics", "cannot be opened by pyarrow.fs.*FUSE path"),
                             (f"{tmp_path}/a-file/metrics", "cannot be written"),
                             ("metrics", "relative path")):
        with pytest.raises(ValueError, match=message):
            stream(spark, dict(options, metricsPath=metrics)).to_delta(f"{tmp_path}/t", "app", str(ckpt),
                                                                      f"{tmp_path}/f")
    assert spark.streams.active == [] and not ckpt.exists() and not (tmp_path / "t").exists()
    assert not (tmp_path / "f").exists() and not (tmp_path / "metrics").exists()


@pytest.mark.connect
def test_batches_of_max_commits_exactly_once_under_replay(spark, shop, tmp_path):
    from mssql_cdc import stream
    from mssql_cdc.sink import delta_sink

    target, facts, ckpt = f"{tmp_path}/bronze", f"{tmp_path}/facts", f"{tmp_path}/ckpt"
    options = dict(sim_options(shop), captureInstance="dbo_orders", maxCommitsPerBatch="80")

    def run():
        query = stream(spark, options).to_delta(target, "orders-v1", ckpt, facts,
                                                trigger={"availableNow": True})
        query.awaitTermination()
        return query

    query = run()
    assert_bronze_equals_change_table(shop, "dbo_orders", target)
    assert len(query.recentProgress) == 3  # 200 commits, at most 80 a batch
    rows = sorted(delta(facts).to_pylist(), key=lambda r: r["batch_id"])
    assert [r["batch_id"] for r in rows] == list(range(len(rows)))
    per_batch = {}
    for r in delta(target).to_pylist():
        per_batch[r["_batch_id"]] = per_batch.get(r["_batch_id"], 0) + 1
    for r in rows:
        assert r["rows"] == per_batch.get(r["batch_id"], 0) and r["event"] is None and r["target"] == target
        assert r["app_id"] == "orders-v1" and r["started_at"] is not None and r["duration_ms"] >= 0
    ends = [r["end_lsn"] for r in rows]
    assert ends == sorted(ends) and None not in ends
    assert ends[-1] == json.loads(query.lastProgress["sources"][0]["endOffset"])["lsn"]
    # Each bronze commit carries the engine's userMetadata and the batch's txn.
    commits = [c for c in commit_infos(target).values() if c.get("operation") == "WRITE"]
    assert len(commits) == len(per_batch)
    for commit in commits:
        meta = json.loads(commit["userMetadata"])
        assert meta["app_id"] == "orders-v1" and meta["rows"] == per_batch[meta["batch_id"]]
    version = _core.delta_snapshot(target)["version"]
    facts_version = _core.delta_snapshot(facts)["version"]
    last = len(rows) - 1

    # Spark replays the last batch when its commit marker is missing: Delta's txn makes the
    # replayed appends write nothing.
    (Path(ckpt) / "commits" / str(last)).unlink()
    (Path(ckpt) / "commits" / f".{last}.crc").unlink(missing_ok=True)
    query = run()
    assert [p["batchId"] for p in query.recentProgress][0] == last
    assert _core.delta_snapshot(target)["version"] == version
    assert _core.delta_snapshot(facts)["version"] == facts_version
    assert_bronze_equals_change_table(shop, "dbo_orders", target)

    # The sink called again by hand with an old batch id writes nothing either. (By hand it
    # needs the batch's offsets, which the planner hands over in the metrics directory.)
    from mssql_cdc import handoff
    from mssql_cdc.metrics_dir import MetricsDir

    last_source = query.lastProgress["sources"][0]
    metrics = f"{tmp_path}/by-hand-metrics"
    planner = MetricsDir(metrics)
    handoff.write(planner, _core.offset_normalize(last_source["startOffset"]),
                  _core.offset_normalize(last_source["endOffset"]), None)
    again = (spark.read.format("delta").load(target).where(f"_batch_id = {last}")
             .drop("_batch_id", "_snapshot", "_chunk"))
    assert again.count() > 0
    delta_sink(target, "orders-v1", facts, metrics_path=metrics)(again, last)
    assert _core.delta_snapshot(target)["version"] == version
    assert _core.delta_snapshot(facts)["version"] == facts_version
    # A new batch id does write (so the check above is not vacuous); it starts where the last
    # batch ended, as the sink checks against the facts table.
    handoff.write(planner, _core.offset_normalize(last_source["endOffset"]),
                  _core.offset_normalize(last_source["endOffset"]), None)
    delta_sink(target, "orders-v1", facts, metrics_path=metrics)(again, last + 1)
    assert _core.delta_snapshot(target)["version"] == version + 1


@pytest.mark.connect
def test_the_registered_format_reads_every_change(spark, shop):
    from mssql_cdc import register

    register(spark)
    frame = spark.readStream.format("mssql_cdc").option("backend", "sim").option("simPath", str(shop)) \
        .option("captureInstance", "dbo_customers").load()
    expected = change_table(shop, "dbo_customers")
    assert frame.schema.fieldNames() == expected.schema.names
    query = frame.writeStream.format("memory").queryName("customers_changes").trigger(availableNow=True).start()
    query.awaitTermination()
    got = spark.table("customers_changes").select("_start_lsn", "_seqval", "_operation").collect()
    assert sorted(map(tuple, got)) == sorted(zip(*(expected.column(c).to_pylist()
                                                   for c in ("_start_lsn", "_seqval", "_operation"))))
    # A metricsPath pyarrow.fs cannot open fails the query as it starts, naming the path.
    with pytest.raises(Exception, match="dbfs:/x' cannot be opened by pyarrow.fs"):
        query = (spark.readStream.format("mssql_cdc").options(**sim_options(shop))
                 .option("captureInstance", "dbo_customers").option("metricsPath", "dbfs:/x").load()
                 .writeStream.format("memory").queryName("customers_dbfs").trigger(availableNow=True).start())
        query.awaitTermination()


def test_a_stream_started_natively_continues_on_spark_with_the_native_schema(spark, cli, tmp_path):
    from mssql_cdc import stream
    from mssql_cdc.pipeline import native_starting_lsn
    from spark_helpers import make_shop

    db = make_shop(cli, tmp_path, transactions=120)
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(
        'tables = ["dbo_customers", "dbo_orders"]\n\n[source]\nbackend = "sim"\nsim_path = "shop.sim"\n'
        'sourceTimeZone = "UTC"\n\n[stream]\ntarget = "lake/bronze/{ci}"\napp_id = "{ci}-v1"\n'
        'checkpoint = "checkpoints/{ci}"\nfacts_table = "lake/ops/facts"\ncontrol_table = "lake/ops/control"\n'
        'trigger = "availableNow"\n')
    cli("run", pipeline)
    native_bronze = tmp_path / "lake" / "bronze"
    before = _core.delta_snapshot(str(native_bronze / "dbo_orders"))
    native_rows = delta(native_bronze / "dbo_orders").num_rows
    assert native_rows > 0
    workload(cli, db, 80, seed=11)

    # dbo_orders goes on from the native checkpoint's last offset, with a new app_id.
    offset = json.loads(_core.native_checkpoint_offset(str(tmp_path / "checkpoints" / "dbo_orders")))
    assert native_starting_lsn(str(tmp_path / "checkpoints" / "dbo_orders")) == offset["lsn"]
    options = {"backend": "sim", "simPath": str(db), "sourceTimeZone": "UTC"}
    orders = dict(options, captureInstance="dbo_orders", startingLsn=offset["lsn"])
    handed_over = stream(spark, orders).to_delta(
        str(native_bronze / "dbo_orders"), "dbo_orders-spark-v1", f"{tmp_path}/spark/checkpoints/dbo_orders",
        f"{tmp_path}/lake/ops/facts", trigger={"availableNow": True})
    # dbo_customers from the start into a bronze table Spark creates, next to the native one.
    fresh = stream(spark, dict(options, captureInstance="dbo_customers")).to_delta(
        f"{tmp_path}/spark/bronze/dbo_customers", "dbo_customers-spark-v1",
        f"{tmp_path}/spark/checkpoints/dbo_customers", f"{tmp_path}/spark/facts",
        trigger={"availableNow": True})
    handed_over.awaitTermination()
    fresh.awaitTermination()

    assert_bronze_equals_change_table(db, "dbo_orders", native_bronze / "dbo_orders")
    assert delta(native_bronze / "dbo_orders").num_rows > native_rows
    after = _core.delta_snapshot(str(native_bronze / "dbo_orders"))
    assert after["schema_string"] == before["schema_string"]
    assert after["properties"] == before["properties"]
    assert "dbo_orders-spark-v1" in after["app_versions"]

    assert_bronze_equals_change_table(db, "dbo_customers", f"{tmp_path}/spark/bronze/dbo_customers")
    native = _core.delta_snapshot(str(native_bronze / "dbo_customers"))
    on_spark = _core.delta_snapshot(f"{tmp_path}/spark/bronze/dbo_customers")
    for key in ("schema_string", "properties", "partition_columns", "min_reader_version", "min_writer_version",
                "reader_features", "writer_features"):
        assert on_spark[key] == native[key], key
    # The facts tables too: the same table, and rows that count what landed.
    spark_facts = _core.delta_snapshot(f"{tmp_path}/spark/facts")
    native_facts = _core.delta_snapshot(f"{tmp_path}/lake/ops/facts")
    assert spark_facts["schema_string"] == native_facts["schema_string"]
    assert spark_facts["properties"] == native_facts["properties"]
    rows = delta(f"{tmp_path}/spark/facts").to_pylist()
    assert sum(r["rows"] for r in rows) == delta(f"{tmp_path}/spark/bronze/dbo_customers").num_rows
    handed = [r for r in delta(f"{tmp_path}/lake/ops/facts").to_pylist()
              if r["app_id"] == "dbo_orders-spark-v1"]
    assert sum(r["rows"] for r in handed) == delta(native_bronze / "dbo_orders").num_rows - native_rows


@pytest.mark.connect
def test_data_loss_fails_the_query_with_a_data_loss_error(spark, shop, cli, tmp_path):
    from mssql_cdc import await_all, is_data_loss, is_schema_changed, stream

    cli("sim", "clock", "--db", shop, "--advance", 7200)
    cli("sim", "idle", "--db", shop)
    cli("sim", "cleanup", "--db", shop, "--retention-minutes", 60)
    workload(cli, shop, 30, seed=13, tables=["dbo.orders"])  # changes after the purge
    options = dict(sim_options(shop), captureInstance="dbo_orders", startingLsn="0x00000000000000000001")
    query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", f"{tmp_path}/ckpt",
                                            trigger={"availableNow": True})
    failed = await_all({"dbo_orders": query})
    assert list(failed) == ["dbo_orders"]
    error = failed["dbo_orders"]
    assert is_data_loss(error) and not is_schema_changed(error)
    assert "mssql_cdc.errors.DataLossError: " in str(error)
    assert delta(f"{tmp_path}/bronze").num_rows == 0

    # failOnDataLoss=false skips to what cleanup left, and says so in the facts table.
    options["failOnDataLoss"] = "false"
    query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-skip-v1", f"{tmp_path}/ckpt-skip",
                                            f"{tmp_path}/facts", trigger={"availableNow": True})
    assert await_all({"dbo_orders": query}) == {}
    assert_bronze_equals_change_table(shop, "dbo_orders", f"{tmp_path}/bronze")
    skipped = [r for r in delta(f"{tmp_path}/facts").to_pylist() if r["event"] == "data_skipped"]
    assert len(skipped) == 1 and skipped[0]["batch_id"] == 0 and skipped[0]["app_id"] == "orders-skip-v1"


def test_a_deleted_or_rewound_checkpoint_fails_its_first_batch_before_writing(spark, shop, cli, tmp_path):
    """One query per checkpoint: Spark's txn check alone would skip the batches of a checkpoint
    that lost its place as replays; the sink compares it with the facts table first."""
    from mssql_cdc import await_all, stream

    target, facts, ckpt = f"{tmp_path}/bronze", f"{tmp_path}/facts", tmp_path / "ckpt"
    options = dict(sim_options(shop), captureInstance="dbo_orders", maxCommitsPerBatch="80")

    def run():
        query = stream(spark, options).to_delta(target, "orders-v1", str(ckpt), facts,
                                                trigger={"availableNow": True})
        return await_all({"dbo_orders": query}).get("dbo_orders")

    assert run() is None
    shutil.copytree(ckpt, tmp_path / "ckpt-copy")
    workload(cli, shop, 60, seed=21, tables=["dbo.orders"])
    assert run() is None
    bronze_rows = delta(target).num_rows
    workload(cli, shop, 40, seed=22, tables=["dbo.orders"])

    shutil.rmtree(ckpt)  # deleted: Spark starts again at batch 0
    error = run()
    assert error is not None and "disagrees with facts table" in str(error), error
    assert "later than batch 0" in str(error)
    shutil.rmtree(ckpt)
    shutil.copytree(tmp_path / "ckpt-copy", ckpt)  # rewound to an older copy
    error = run()
    assert error is not None and "disagrees with facts table" in str(error), error
    assert delta(target).num_rows == bronze_rows


@pytest.mark.connect
def test_bootstrap_snapshots_once_then_streams_from_the_snapshot(spark, shop, cli, tmp_path):
    from mssql_cdc import stream

    target, facts, ckpt = f"{tmp_path}/bronze", f"{tmp_path}/facts", f"{tmp_path}/ckpt"
    options = dict(sim_options(shop), captureInstance="dbo_customers")
    rows_now = next(t["rows"] for t in info(cli, shop)["tables"] if t["name"] == "dbo.customers")
    query = stream(spark, options).to_delta(target, "customers-v1", ckpt, facts, bootstrap=True,
                                            trigger={"availableNow": True})
    query.awaitTermination()
    bronze = delta(target).to_pylist()
    snapshot = [r for r in bronze if r["_operation"] == 0]
    assert len(snapshot) == rows_now and len(bronze) == rows_now  # nothing changed after the snapshot
    workload(cli, shop, 30, seed=12, tables=["dbo.customers"])
    query = stream(spark, options).to_delta(target, "customers-v1", ckpt, facts, bootstrap=True,
                                            trigger={"availableNow": True})
    query.awaitTermination()
    bronze = delta(target).to_pylist()
    assert len([r for r in bronze if r["_operation"] == 0]) == rows_now  # not taken again
    snapshot_lsn = snapshot[0]["_start_lsn"]
    changes = [r for r in change_table(shop, "dbo_customers").to_pylist() if r["_start_lsn"] > snapshot_lsn]
    assert sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in bronze if r["_operation"] != 0) == \
        sorted((r["_start_lsn"], r["_seqval"], r["_operation"]) for r in changes)
    events = [r for r in delta(facts).to_pylist() if r["event"] is not None]
    assert sorted(r["event"] for r in events) == ["bootstrap", "snapshot_open"]
    opened = next(r for r in events if r["event"] == "snapshot_open")
    assert json.loads(opened["detail"]) == {"mode": "full", "kind": "bootstrap", "generation": 0,
                                            "lost_from_ts": None, "lost_to_ts": None}
    assert opened["max_lsn"] == snapshot[0]["_start_lsn"] and opened["rows"] == 0
    # A new stream into the same bronze (new checkpoint and app_id) finds the snapshot by its
    # rows and reads nothing: it starts from the snapshot's LSN.
    query = stream(spark, options).to_delta(target, "customers-v2", f"{tmp_path}/ckpt-v2", facts,
                                            bootstrap=True, trigger={"availableNow": True})
    query.awaitTermination()
    again = delta(target).to_pylist()
    assert len([r for r in again if r["_operation"] == 0]) == rows_now
    assert len(again) == len(bronze) + len(changes)  # the new stream's copy of the changes
    bootstraps = [r for r in delta(facts).to_pylist() if r["event"] == "bootstrap"]
    assert sorted(r["app_id"] for r in bootstraps) == ["customers-v1", "customers-v2"]
    assert {r["max_lsn"] for r in bootstraps} == {snapshot_lsn}


def test_the_example_script_runs(spark, shop, tmp_path):
    import importlib.util

    path = ROOT / "examples" / "spark_many_tables.py"
    spec = importlib.util.spec_from_file_location("spark_many_tables", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    lake = tmp_path / "lake"
    failed = example.run(spark, sim_options(shop), str(lake))
    assert failed == {}
    for ci in ("dbo_customers", "dbo_orders", "dbo_order_items"):
        assert_bronze_equals_change_table(shop, ci, lake / "bronze" / ci)
    shutil.rmtree(lake)


@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "tls"])
def test_the_odbc_backend_through_sim_serve_writes_the_same_bronze_as_the_sim_backend(spark, shop, cli, tmp_path,
                                                                                      tls):
    """The data source reads through unixODBC from `mssql-cdc sim serve` (FreeTDS in plaintext;
    Driver 18 over TLS, strict) as well as from the file directly; both streams hold every
    change once and write equal bronze."""
    from spark_helpers import served_sim

    from mssql_cdc import stream

    with served_sim(cli, shop, tls=tls) as odbc:
        for name, options in (("odbc", odbc), ("sim", sim_options(shop))):
            query = stream(spark, dict(options, captureInstance="dbo_order_items", maxCommitsPerBatch="70")).to_delta(
                f"{tmp_path}/{name}", f"items-{name}", f"{tmp_path}/ckpt-{name}", trigger={"availableNow": True})
            query.awaitTermination()
            assert_bronze_equals_change_table(shop, "dbo_order_items", f"{tmp_path}/{name}")
    key = ["_start_lsn", "_seqval", "_operation"]
    odbc_rows = delta(f"{tmp_path}/odbc").sort_by([(k, "ascending") for k in key])
    sim_rows = delta(f"{tmp_path}/sim").sort_by([(k, "ascending") for k in key])
    assert odbc_rows.equals(sim_rows)


# Facts columns a batch's rows and the source's state fix, the same whichever mode read it.
SAME_IN_BOTH_MODES = ("rows", "min_lsn", "max_lsn", "end_lsn", "end_commit_ts", "read_mb",
                      "retention_watermark_ts", "retention_headroom_hours", "source_max_commit_ts",
                      "ingestion_lag_seconds")


@pytest.mark.parametrize("route", ["bronze", "delta_sink"])
def test_spark_facts_hold_the_measures_the_native_engine_takes_of_the_same_batches(spark, shop, cli, tmp_path,
                                                                                   monkeypatch, route):
    """Read through odbc from `sim serve`, so that there is a round trip to time: per batch, the
    Spark stream's facts row and the native stream's agree, timings within noise. On both of
    to_delta's routes: the bronze route (a local checkpoint), where the tasks write bronze and
    hand their measures to the sink in their rows, and delta_sink's (a checkpoint URI), where
    the measures travel through the metrics directory."""
    from spark_helpers import served_sim

    from mssql_cdc import stream

    with served_sim(cli, shop) as odbc:
        native = tmp_path / "native"
        native.mkdir()
        monkeypatch.setenv("MSSQL_CDC_FACTS_PASSWORD", odbc["password"])
        (native / "pipeline.toml").write_text(f"""tables = ["dbo_orders"]

[source]
backend = "odbc"
connectionString = "{odbc['connectionString']}"
user = "{odbc['user']}"
password_env = "MSSQL_CDC_FACTS_PASSWORD"
maxCommitsPerBatch = 80

[stream]
target = "lake/bronze/{{ci}}"
app_id = "{{ci}}-v1"
checkpoint = "checkpoints/{{ci}}"
facts_table = "lake/facts"
trigger = "availableNow"
""")
        cli("run", native / "pipeline.toml")
        options = dict(odbc, captureInstance="dbo_orders", maxCommitsPerBatch="80")
        checkpoint = f"{tmp_path}/ckpt" if route == "bronze" else f"file://{tmp_path}/ckpt"
        query = stream(spark, options).to_delta(f"{tmp_path}/bronze", "orders-v1", checkpoint,
                                                f"{tmp_path}/facts", trigger={"availableNow": True})
        query.awaitTermination()
        assert query.exception() is None

    def batches(facts):
        return {r["batch_id"]: r for r in delta(facts).to_pylist() if r["event"] is None}

    mine, theirs = batches(f"{tmp_path}/facts"), batches(native / "lake" / "facts")
    assert sorted(mine) == sorted(theirs) and len(mine) == 3
    for batch_id, row in mine.items():
        native_row = theirs[batch_id]
        for name in SAME_IN_BOTH_MODES:
            assert row[name] == native_row[name], (batch_id, name)
        assert row["retention_headroom_hours"] is not None
        # The engine's TDS reader reads the change rows and measures its own wait on them.
        assert row["network_wait_ms"] >= 0 and native_row["network_wait_ms"] >= 0
        # And both rows say so.
        assert row["detail"] == native_row["detail"] and json.loads(row["detail"])["readers"] in (["tds"], ["tds+tls"])
        assert row["read_seconds"] > 0 and native_row["read_seconds"] > 0
        assert 0 < row["source_rtt_ms"] < 1000 and 0 < native_row["source_rtt_ms"] < 1000
        assert abs(row["capture_lag_seconds"] - native_row["capture_lag_seconds"]) < 300
    metrics = tmp_path / "ckpt" / "_mssql_cdc_metrics" / "orders-v1"
    if route == "bronze":
        assert not metrics.exists()  # the measures came with the tasks' rows
        # The engine committed each batch's files, with the batch's txn.
        writes = [info for info in commit_infos(tmp_path / "bronze").values() if info["operation"] == "WRITE"]
        assert len(writes) == 3 and all(info["engineInfo"].startswith("mssql-cdc/") for info in writes)
    else:
        assert [p.name for p in metrics.iterdir()] == []  # the sink folded the files and deleted them


def _refusing_the_cache(sink):
    """`sink` on a platform that refuses the cache API (serverless): persist() and cache() raise
    in the process where foreachBatch runs (the driver, or the Connect server's worker)."""

    def run(df, batch_id):
        frame = type(df)

        def refuse(self, *args, **kwargs):
            raise RuntimeError("[NOT_SUPPORTED_WITH_SERVERLESS] PERSIST TABLE is not supported on serverless compute.")

        saved = frame.persist, frame.cache
        frame.persist = frame.cache = refuse
        try:
            sink(df, batch_id)
        finally:
            frame.persist, frame.cache = saved

    return run


@pytest.mark.connect
def test_the_sink_writes_the_same_bronze_and_facts_where_the_cache_api_is_refused(spark, shop, tmp_path):
    from mssql_cdc import register
    from mssql_cdc.sink import delta_sink

    register(spark)
    options = dict(sim_options(shop), captureInstance="dbo_orders", maxCommitsPerBatch="80")
    schema = StructType.fromJson(json.loads(_core.Feed(options).spark_schema_json()))
    written = {}
    for name, wrap in (("cached", lambda sink: sink), ("refused", _refusing_the_cache)):
        target, facts = f"{tmp_path}/{name}/bronze", f"{tmp_path}/{name}/facts"
        metrics = f"{tmp_path}/{name}/metrics"
        frame = (spark.readStream.format("mssql_cdc").schema(schema).options(**options)
                 .option("metricsPath", metrics).load())
        query = (frame.writeStream.foreachBatch(wrap(delta_sink(target, "orders-v1", facts, metrics_path=metrics)))
                 .option("checkpointLocation", f"{tmp_path}/{name}/ckpt").trigger(availableNow=True).start())
        query.awaitTermination()
        assert query.exception() is None
        assert_bronze_equals_change_table(shop, "dbo_orders", target)
        # The target is a path of its own; timings move from run to run.
        drop = ("started_at", "duration_ms", "written_at", "target", "read_seconds", "capture_lag_seconds")
        written[name] = (sorted(delta(target).to_pylist(), key=lambda r: (r["_start_lsn"], r["_seqval"], r["_operation"])),
                         sorted(({k: v for k, v in r.items() if k not in drop} for r in delta(facts).to_pylist()),
                                key=lambda r: r["batch_id"]))
    assert len(written["cached"][1]) == 3
    assert written["refused"] == written["cached"]


def test_stream_warns_once_in_the_callers_log_naming_every_unknown_option(spark, shop, caplog):
    import logging

    import mssql_cdc

    options = dict(sim_options(shop), captureInstance="dbo_orders", startLSN="x", MAXCOMMITSPERBATCH="5", colums="a")
    with caplog.at_level(logging.WARNING, logger="mssql_cdc"):
        mssql_cdc.stream(spark, options)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "mssql_cdc"]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "'colums', 'startLSN'" in message and "MAXCOMMITSPERBATCH" not in message


@pytest.mark.connect
def test_get_spark_returns_the_active_session(spark):
    from mssql_cdc import spark as spark_module

    # The session in use (after a streaming query it may be another wrapper of the same Spark).
    active = spark_module.get_spark()
    assert active.conf.get("spark.app.id") == spark.conf.get("spark.app.id")
    assert active.range(3).count() == 3
    cores = spark_module.available_cores(spark)
    assert cores == (2 if type(spark).__module__.startswith("pyspark.sql.session") else 0)
