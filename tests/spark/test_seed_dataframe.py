"""CdcStream.seed: a copy of the table already in the lake stands for its snapshot; a stream
bootstrapped after it reads nothing and replays every change after the copy. Every refusal
comes before anything is written."""

import datetime as dt
import os

import pytest
from pyspark.sql import functions as F

from spark_helpers import change_table, delta, make_shop, sim_options, workload
from test_snapshot_source import current_rows

CI = "dbo_customers"
KEY = ("customer_id",)


@pytest.fixture
def shop(cli, tmp_path):
    return make_shop(cli, tmp_path, transactions=200)


def copy_of_table(spark, shop):
    """A copy of dbo.customers as a user's lake holds it (read through the snapshot source),
    and the max LSN recorded before it was read."""
    from mssql_cdc import _core, register

    register(spark)
    lsn = _core.open_sim_source(str(shop)).max_lsn()
    frame = (spark.read.format("mssql_cdc_snapshot").options(**sim_options(shop))
             .option("captureInstance", CI).load())
    rows = frame.drop("_capture_instance", "_start_lsn", "_seqval", "_operation", "_command_id",
                      "_commit_ts").collect()
    # Upper-case names, as a copy made by another tool may have them: matched ignoring case.
    copy = spark.createDataFrame(rows).toDF(*[c.upper() for c in rows[0].asDict()])
    return copy.withColumn("EXTRA", F.lit(1)), lsn  # a column the stream does not capture


def latest_images(bronze_rows):
    """The latest image per key of bronze (snapshot rows then changes), deleted keys left out."""
    latest = {}
    for row in bronze_rows:
        if row["_operation"] == 3:
            continue
        order = (row["_start_lsn"], row["_command_id"] or 0, row["_seqval"] or "", row["_operation"])
        key = tuple(row[c] for c in KEY)
        if key not in latest or order > latest[key][0]:
            latest[key] = (order, row)
    return {k: r for k, (_, r) in latest.items() if r["_operation"] != 1}


@pytest.mark.connect
def test_a_seed_then_a_bootstrapped_stream_gives_the_table_reading_nothing(spark, shop, cli, tmp_path):
    from mssql_cdc import stream

    copy, lsn = copy_of_table(spark, shop)
    workload(cli, shop, 40, seed=9, tables=["dbo.customers"])  # changes after the copy
    target, facts = f"{tmp_path}/bronze", f"{tmp_path}/facts"
    cdc = stream(spark, dict(sim_options(shop), captureInstance=CI))
    offset = cdc.seed(target, copy, lsn, app_id="customers-v1", facts_table=facts)
    assert offset["lsn"] == lsn and offset["commit_ts"]
    seeded = delta(target).to_pylist()
    assert len(seeded) == copy.count()
    assert {(r["_operation"], r["_start_lsn"], r["_snapshot"], r["_capture_instance"]) for r in seeded} == \
        {(0, lsn, lsn, CI)}
    # Stamped with the commit time of the seed's LSN (UTC, whatever the session's zone).
    assert {r["_commit_ts"].replace(tzinfo=None) for r in seeded} == {dt.datetime.fromisoformat(offset["commit_ts"])}
    # The same as_of again: the seed is there, nothing is written.
    assert cdc.seed(target, copy, lsn) == offset
    assert len(delta(target).to_pylist()) == len(seeded)

    query = cdc.to_delta(target, "customers-v1", f"{tmp_path}/ckpt", facts, bootstrap=True,
                         trigger={"availableNow": True})
    query.awaitTermination()
    bronze = delta(target).to_pylist()
    assert len([r for r in bronze if r["_operation"] == 0]) == len(seeded)  # the bootstrap read nothing
    changes = [r for r in change_table(shop, CI).to_pylist() if r["_start_lsn"] > lsn]
    assert len(bronze) == len(seeded) + len(changes)
    table = current_rows(shop, CI, KEY)
    assert set(latest_images(bronze)) == set(table)
    for key, row in latest_images(bronze).items():
        assert (row["name"], row["email"]) == (table[key]["name"], table[key]["email"])
    bootstraps = [r for r in delta(facts).to_pylist() if r["event"] == "bootstrap"]
    assert [(r["app_id"], r["max_lsn"], r["rows"]) for r in bootstraps] == [("customers-v1", lsn, len(seeded))]


def test_as_of_a_time_maps_to_the_last_commit_at_or_before_it(spark, shop, tmp_path):
    from mssql_cdc import _core, stream

    copy, lsn = copy_of_table(spark, shop)
    source = _core.open_sim_source(str(shop))
    commit_ts = dt.datetime.fromisoformat(stream(spark, dict(sim_options(shop), captureInstance=CI))
                                          .seed(f"{tmp_path}/by_lsn", copy, lsn)["commit_ts"])
    # Half a second after the commit, as an aware datetime in another zone: the same commit.
    aware = (commit_ts + dt.timedelta(milliseconds=500)).replace(tzinfo=dt.timezone.utc) \
        .astimezone(dt.timezone(dt.timedelta(hours=-3)))
    offset = stream(spark, dict(sim_options(shop), captureInstance=CI)).seed(f"{tmp_path}/by_time", copy, aware)
    assert offset["lsn"] == lsn == source.max_lsn()


def test_bad_seeds_are_refused_before_anything_is_written(spark, shop, cli, tmp_path):
    from mssql_cdc import ConfigError, DataLossError, stream

    copy, lsn = copy_of_table(spark, shop)
    cdc = stream(spark, dict(sim_options(shop), captureInstance=CI))
    target = f"{tmp_path}/bronze"
    with pytest.raises(ConfigError, match="lacks key column"):
        cdc.seed(target, copy.drop("CUSTOMER_ID"), lsn)
    with pytest.raises(ConfigError, match="allow_missing_columns"):
        cdc.seed(target, copy.drop("EMAIL"), lsn)
    with pytest.raises(ConfigError, match="in the future"):
        cdc.seed(target, copy, dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1))
    with pytest.raises(ConfigError, match="above the max LSN"):
        cdc.seed(target, copy, "0xFFFFFFFF000000000001")
    with pytest.raises(ConfigError, match="as_of must be a datetime"):
        cdc.seed(target, copy, 12)
    with pytest.raises(ConfigError, match="facts_table is given without app_id"):
        cdc.seed(target, copy, lsn, facts_table=f"{tmp_path}/facts")
    assert not os.path.exists(target) and not os.path.exists(f"{tmp_path}/facts")

    # A missing captured column reads NULL when allowed.
    cdc.seed(target, copy.drop("EMAIL"), lsn, allow_missing_columns=True)
    assert {r["email"] for r in delta(target).to_pylist()} == {None}
    # Another snapshot is there: refused without reseed, replaced by a newer one with it.
    workload(cli, shop, 10, seed=4, tables=["dbo.customers"])
    newer = cdc.snapshot(f"{tmp_path}/other")["lsn"]
    with pytest.raises(ConfigError, match="already holds a snapshot"):
        cdc.seed(target, copy, newer)
    assert cdc.seed(target, copy, newer, reseed=True)["lsn"] == newer

    # CDC no longer holds the changes after an old as_of: cleanup passed it.
    cli("sim", "clock", "--db", shop, "--advance", 7 * 86400)
    workload(cli, shop, 5, seed=8, tables=["dbo.customers"])
    cli("sim", "cleanup", "--db", shop, "--retention-minutes", "60")
    with pytest.raises(DataLossError, match="changes made after the copy was read are gone"):
        cdc.seed(f"{tmp_path}/late", copy, lsn)
    assert not os.path.exists(f"{tmp_path}/late")
