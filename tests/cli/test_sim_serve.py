"""`mssql-cdc sim serve`, `sim login add` and `sim grant` from the shell: a simulated database
served over TDS, queried with unixODBC's isql through the FreeTDS driver (both installed by
scripts/setup.sh), and stopped with SIGTERM."""

import json
import os
import subprocess

import pytest

from helpers import BINARY, SimServer

ISQL = "isql"


@pytest.fixture
def shop(cli, tmp_path):
    db = tmp_path / "shop.sim"
    cli("sim", "create", "--db", db, "--name", "shop", "--clock", "manual",
        "--start", "2026-01-01 00:00:00")
    cli("sim", "demo-schema", "--db", db)
    cli("sim", "workload", "--db", db, "--transactions", 20, "--mix", "insert=1", "--seed", 3)
    env = dict(os.environ, SHOP_OWNER_PW="owner-secret")
    added = subprocess.run([BINARY, "sim", "login", "add", "--db", str(db), "--name", "owner",
                            "--password-env", "SHOP_OWNER_PW", "--db-owner"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert added.returncode == 0, added.stderr
    assert added.stdout == "added login owner (db owner)\n"
    cli("sim", "login", "add", "--db", db, "--name", "reader", "--password", "reader-secret")
    granted = cli("sim", "grant", "--db", db, "--login", "reader", "--object", "CDC.DBO_ORDERS_CT")
    assert granted.stdout == "granted SELECT on cdc.dbo_orders_CT to reader\n"
    return db


class Server(SimServer):
    """`sim serve` queried through isql and FreeTDS."""

    def query(self, user, password, sql):
        """Runs `sql` with isql; returns (exit status, output lines)."""
        connection = (f"DRIVER=FreeTDS;SERVER=127.0.0.1;PORT={self.port};TDS_Version=7.4;"
                      f"UID={user};PWD={password}")
        result = subprocess.run([ISQL, "-k", connection, "-b", "-v", "-d|"], input=sql + "\n",
                                capture_output=True, text=True, timeout=60)
        return result.returncode, [line for line in (result.stdout + result.stderr).splitlines()
                                   if line.strip()]


@pytest.fixture
def server(shop):
    running = Server(shop)
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def test_serves_the_max_lsn_the_simulator_reports(cli, shop, server):
    max_lsn = json.loads(cli("sim", "info", "--db", shop, "--json").stdout)["max_lsn"]
    status, lines = server.query("owner", "owner-secret", "SELECT sys.fn_cdc_get_max_lsn()")
    assert status == 0, lines
    assert lines == [max_lsn[2:].lower()]

    status, lines = server.query("reader", "reader-secret",
                                 "EXEC sys.sp_cdc_help_change_data_capture")
    assert status == 0, lines
    assert [line.split("|")[2] for line in lines] == ["dbo_orders"]
    status, lines = server.query("reader", "reader-secret", "SELECT USER_NAME()")
    assert lines == ["reader"]


def test_refuses_a_wrong_password_and_an_ungranted_read(server):
    status, lines = server.query("reader", "not-the-password", "SELECT 1")
    assert status != 0
    assert any("Login failed for user 'reader'" in line for line in lines), lines

    # isql exits 0 after a failed statement; the error is in its output.
    _, lines = server.query(
        "reader", "reader-secret",
        "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_customers(0x00, 0x00, N'all')")
    assert any("The SELECT permission was denied on the object "
               "'fn_cdc_get_all_changes_dbo_customers', database 'shop', schema 'cdc'." in line
               for line in lines), lines


def test_sigterm_stops_it_cleanly_after_one_line_of_output(server):
    assert server.query("owner", "owner-secret", "SELECT 1")[1] == ["1"]
    status, rest, _ = server.stop()
    assert status == 0
    assert rest == ""


def test_bad_logins_and_grants_are_one_error_line(cli, shop):
    for args, message in [
        (["login", "add", "--name", "reader", "--password", "x"], "already exists"),
        (["login", "add", "--name", "nopw"], "needs a password"),
        (["login", "add", "--name", "envless", "--password-env", "SHOP_NO_SUCH_VAR"], "not set"),
        (["grant", "--login", "ghost", "--object", "dbo.orders"], "no login named ghost"),
        (["grant", "--login", "reader", "--object", "cdc.nope_CT"], "no capture instance nope"),
    ]:
        result = cli("sim", *args, "--db", shop, check=False)
        assert result.returncode == 2, args
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert message in result.stderr, result.stderr


def test_serving_a_file_that_is_not_a_sim_database_fails_at_once(cli, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = cli("sim", "serve", "--db", notes, "--port", 0, check=False)
    assert result.returncode == 2
    assert "not a mssql-cdc sim database" in result.stderr
    assert result.stdout == ""
