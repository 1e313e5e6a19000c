"""to_delta(on_data_loss="resnapshot") on Spark: when cleanup purged the changes after where the
stream stands, the next start snapshots the table again (full or chunked) and goes on as
generation 1 (<checkpoint>/_generations/1, sink id <app_id>.g1), with the lost interval in the
facts; a second loss within resnapshot_interval_days is a DataLossError; the refusals."""

import json
import os

import pytest

from spark_helpers import delta, make_shop, sim_options, workload
from test_seed_dataframe import latest_images

CI = "dbo_customers"


@pytest.fixture
def shop(cli, tmp_path):
    return make_shop(cli, tmp_path, transactions=120)


def purge(cli, shop, seed):
    """Changes, two hours, cleanup keeping the last hour, more changes."""
    workload(cli, shop, 20, seed=seed, tables=["dbo.customers"])
    cli("sim", "clock", "--db", shop, "--advance", 7200)
    cli("sim", "idle", "--db", shop)
    cli("sim", "cleanup", "--db", shop, "--retention-minutes", 60)
    workload(cli, shop, 20, seed=seed + 1, tables=["dbo.customers"])


@pytest.mark.parametrize("mode", ["full", "chunked"])
def test_a_purged_stream_snapshots_again_as_generation_one(spark, shop, cli, tmp_path, mode):
    from mssql_cdc import DataLossError, stream

    target, facts, ckpt, app_id = f"{tmp_path}/bronze", f"{tmp_path}/facts", f"{tmp_path}/ckpt", "customers-v1"
    cdc = stream(spark, dict(sim_options(shop), captureInstance=CI))

    def run(**kwargs):
        cdc.to_delta(target, app_id, ckpt, facts, on_data_loss="resnapshot", snapshot=mode,
                     trigger={"availableNow": True}, **kwargs).awaitTermination()
        if mode == "chunked":
            while cdc.backfill(target, app_id=app_id, facts_table=facts, chunk_rows=20)["state"] != "done":
                pass

    run(bootstrap=True)
    purge(cli, shop, 40)
    run()
    state = json.loads(open(f"{ckpt}/_mssql_cdc_generation.json").read())
    assert state["generation"] == 1 and "recovering" not in state
    assert os.path.isdir(f"{ckpt}/_generations/1/commits")
    # The table as a fresh snapshot reads it (the change table lost its early rows to cleanup).
    cdc.snapshot(f"{tmp_path}/fresh")
    table = latest_images(delta(f"{tmp_path}/fresh").to_pylist())
    # After a loss, bronze is rebuilt from the newest snapshot (docs/snapshots.md): its rows
    # and the changes after it; a delete lost in the gap leaves older rows behind it.
    s1 = state["snapshot_lsn"]
    ours = latest_images([r for r in delta(target).to_pylist()
                          if (r["_operation"] == 0 and r["_snapshot"] == s1) or
                          (r["_operation"] != 0 and r["_start_lsn"] > s1)])
    assert set(ours) == set(table)
    for key, row in ours.items():
        assert (row["name"], row["email"]) == (table[key]["name"], table[key]["email"])
    events = [r for r in delta(facts).to_pylist() if r["app_id"] == f"{app_id}.g1" and r["event"]]
    (done,) = [r for r in events if r["event"] == "resnapshot"]
    assert done["lost_from_ts"] is not None and done["lost_to_ts"] > done["lost_from_ts"]
    (opened,) = [r for r in events if r["event"] == "snapshot_open"]
    assert json.loads(opened["detail"])["generation"] == 1 and json.loads(opened["detail"])["mode"] == mode
    assert done["max_lsn"] == state["snapshot_lsn"]

    # Generation 1 goes on; a second loss within the interval is refused.
    workload(cli, shop, 10, seed=60, tables=["dbo.customers"])
    run()
    assert json.loads(open(f"{ckpt}/_mssql_cdc_generation.json").read())["generation"] == 1
    purge(cli, shop, 70)
    with pytest.raises(DataLossError, match="resnapshot_interval_days"):
        run()


def test_resnapshot_refusals_come_before_anything_is_written(spark, shop, tmp_path):
    from mssql_cdc import ConfigError, stream

    cdc = stream(spark, dict(sim_options(shop), captureInstance=CI))
    target, facts = f"{tmp_path}/bronze", f"{tmp_path}/facts"
    for kwargs, message in ((dict(checkpoint="s3://bucket/ckpt", facts_table=facts), "local or Volume"),
                            (dict(checkpoint=f"{tmp_path}/ckpt", facts_table=None), "needs facts_table")):
        with pytest.raises(ConfigError, match=message):
            cdc.to_delta(target, "app", kwargs["checkpoint"], kwargs["facts_table"], on_data_loss="resnapshot")
    with pytest.raises(ConfigError, match="failOnDataLoss"):
        stream(spark, dict(sim_options(shop), captureInstance=CI, failOnDataLoss="false")).to_delta(
            target, "app", f"{tmp_path}/ckpt", facts, on_data_loss="resnapshot")
    assert not os.path.exists(target) and not os.path.exists(facts) and not os.path.exists(f"{tmp_path}/ckpt")


@pytest.mark.connect
def test_a_checkpoint_this_process_cannot_see_is_refused(spark, shop, tmp_path):
    """The facts table has batches of the stream, but the checkpoint holds none of Spark's: the
    pre-flight would read nothing, so to_delta refuses rather than start over silently."""
    from mssql_cdc import ConfigError, stream

    target, facts = f"{tmp_path}/bronze", f"{tmp_path}/facts"
    cdc = stream(spark, dict(sim_options(shop), captureInstance=CI))
    cdc.to_delta(target, "app", f"{tmp_path}/ckpt", facts, on_data_loss="resnapshot",
                 trigger={"availableNow": True}).awaitTermination()
    with pytest.raises(ConfigError, match="different directories"):
        cdc.to_delta(target, "app", f"{tmp_path}/elsewhere", facts, on_data_loss="resnapshot")
