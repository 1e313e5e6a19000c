"""What the tests of other people's SQL Server clients share: the clients' jars (Maven, by
scripts/setup_clients.sh), their Java checks compiled once, and a simulated database with one
captured table and known changes, served by `sim serve` over TDS."""

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from sim_serving import BINARY

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "Cl1ent-checks!"


@pytest.fixture(scope="session")
def client_jars():
    folder = subprocess.run(["bash", str(ROOT / "scripts" / "setup_clients.sh")], check=True, capture_output=True,
                            text=True).stdout.strip()
    return Path(folder)


@pytest.fixture(scope="session")
def java_checks(client_jars, tmp_path_factory):
    """A function running one of tests/clients/java's programs with the clients' jars; returns
    the finished process."""
    classes = tmp_path_factory.mktemp("classes")
    sources = sorted(str(p) for p in (Path(__file__).parent / "java").glob("*.java"))
    subprocess.run(["javac", "-d", str(classes), "-cp", f"{client_jars}/*", *sources], check=True)

    def run(program, *args, timeout=120):
        return subprocess.run(["java", "-cp", f"{classes}:{client_jars}/*", program, *map(str, args)],
                              capture_output=True, text=True, timeout=timeout)

    return run


@dataclass
class ClientDatabase:
    path: Path
    capture_instance: str
    min_lsn: str     # "0x..." hex
    change_rows: int  # of the capture instance
    login: str = "etl"  # a db owner
    password: str = PASSWORD


def _sim(*args):
    return subprocess.run([BINARY, "sim", *map(str, args)], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="session")
def client_database(tmp_path_factory):
    """dbo.orders with CDC: three inserts, an update and a delete, in three transactions (six
    change rows); a db-owner login `etl`."""
    path = tmp_path_factory.mktemp("clients") / "sim.db"
    _sim("create", "--db", path, "--name", "sim")
    _sim("create-table", "--db", path, "--table", "dbo.orders", "--column", "id int not null",
         "--column", "note nvarchar(40)", "--column", "amount decimal(18,2)", "--key", "id")
    rows = [{"op": "insert", "table": "dbo.orders", "row": {"id": i, "note": f"n{i}", "amount": f"{i}.50"}}
            for i in (1, 2, 3)]
    _sim("dml", "--db", path, "--json", json.dumps(rows))
    _sim("dml", "--db", path, "--json", json.dumps(
        [{"op": "update", "table": "dbo.orders", "key": {"id": 1}, "set": {"note": "changed"}}]))
    _sim("dml", "--db", path, "--json", json.dumps([{"op": "delete", "table": "dbo.orders", "key": {"id": 2}}]))
    subprocess.run([BINARY, "sim", "login", "add", "--db", str(path), "--name", "etl", "--password-env", "PW",
                    "--db-owner"], check=True, capture_output=True, env={"PW": PASSWORD})
    info = _sim("info", "--db", path)
    min_lsn = re.search(r"dbo_orders on dbo\.orders: min LSN (0x[0-9A-F]{20})", info).group(1)
    return ClientDatabase(path, "dbo_orders", min_lsn, 6)
