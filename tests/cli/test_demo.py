"""`mssql-cdc demo`: the main job runs end to end and reads exactly the change tables."""


def test_demo_reads_every_change_of_every_instance(cli, tmp_path):
    result = cli("demo", "--dir", tmp_path, "--seconds", 2, "--tps", 100)
    out = result.stdout
    for ci in ("dbo_customers", "dbo_orders", "dbo_order_items"):
        line = next(line for line in out.splitlines() if line.startswith(ci))
        assert line.endswith("= change table"), line
        assert int(line.split()[1]) > 0, line
    assert (tmp_path / "sales.sim").exists()
