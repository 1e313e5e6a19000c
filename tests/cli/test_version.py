"""The version is set in one place, CMakeLists.txt's project(); the executable, the extension
and the installed package's metadata all say it."""

import json
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import mssql_cdc

from helpers import ROOT


def test_the_executable_the_extension_and_the_metadata_say_the_one_version(cli):
    declared = re.search(r"project\(mssql_cdc VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert cli("--version").stdout == f"mssql-cdc {declared}\n"
    assert mssql_cdc.__version__ == declared
    assert version("mssql-cdc") == declared


def test_the_console_script_is_the_same_command_line(cli, tmp_path):
    """The `mssql-cdc` a pip install puts on the PATH runs the engine's command line inside the
    extension: the same output, the same exit statuses."""
    script = Path(sys.executable).parent / "mssql-cdc"
    run = lambda *args: subprocess.run([str(script), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert run("--version").stdout == cli("--version").stdout
    db = tmp_path / "shop.sim"
    assert run("sim", "create", "--db", db).returncode == 0
    assert run("sim", "demo-schema", "--db", db).returncode == 0
    listed = run("sim", "info", "--db", db, "--json")
    native = json.loads(cli("sim", "info", "--db", db, "--json").stdout)
    assert listed.returncode == 0
    assert json.loads(listed.stdout)["capture_instances"] == native["capture_instances"]
    bad = run("run", tmp_path / "missing.toml")
    assert bad.returncode == cli("run", tmp_path / "missing.toml", check=False).returncode == 2
    assert "missing.toml" in bad.stderr
