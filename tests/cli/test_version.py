"""The version is set in one place, CMakeLists.txt's project(); the executable, the extension
and the installed package's metadata all say it."""

import re
from importlib.metadata import version

import mssql_cdc

from helpers import ROOT


def test_the_executable_the_extension_and_the_metadata_say_the_one_version(cli):
    declared = re.search(r"project\(mssql_cdc VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert cli("--version").stdout == f"mssql-cdc {declared}\n"
    assert mssql_cdc.__version__ == declared
    assert version("mssql-cdc") == declared
