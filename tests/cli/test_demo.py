"""`mssql-cdc demo`: the main job end to end, its bronze tables checked by delta-rs."""

import deltalake


def test_demo_copies_every_change_of_every_table(cli, tmp_path):
    result = cli("demo", "--dir", tmp_path, "--seconds", 2, "--tps", 100)
    tables = result.stdout.split("\nTables\n", 1)[1]
    for ci in ("dbo_customers", "dbo_orders", "dbo_order_items"):
        line = next(line for line in tables.splitlines() if line.strip().startswith(ci))
        fields = line.split()
        assert fields[6:8] == ["=", "source"], line
        counts = [int(n) for n in fields[1:6]]  # snapshot, deletes, inserts, before, after
        bronze = deltalake.DeltaTable(str(tmp_path / "lake" / "bronze" / ci))
        assert bronze.to_pyarrow_table().num_rows == sum(counts)
        assert counts[0] > 0, "the bootstrap snapshot found the seeded rows"
    facts = deltalake.DeltaTable(str(tmp_path / "lake" / "ops" / "ingestion_facts"))
    assert facts.to_pyarrow_table().num_rows >= 6
