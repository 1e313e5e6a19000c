"""The `mssql-cdc` command a `pip install` puts on the PATH: the engine's own command line
(`run`, `status`, `demo`, `sim ...`), run inside the extension."""

import sys

from mssql_cdc import _core


def main() -> None:
    sys.exit(_core.run_command_line(["mssql-cdc", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
