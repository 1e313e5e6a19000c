"""`mssql-cdc sim serve` over a simulated database for the length of a block, for the tests
that read it over TDS."""

import contextlib
import os
import subprocess
from pathlib import Path

BINARY = os.environ.get("MSSQL_CDC_BIN", str(Path(__file__).resolve().parents[1] / "build" / "mssql-cdc"))


@contextlib.contextmanager
def serving(db, *options):
    """Yields the port `sim serve` listens on, on 127.0.0.1; stops it after the block. `options`
    are more of serve's (--tls-cert ...)."""
    server = subprocess.Popen([BINARY, "sim", "serve", "--db", str(db), "--port", "0", *map(str, options)],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline().strip()
        assert line.startswith("listening on "), line
        yield int(line.rsplit(":", 1)[1])
    finally:
        server.terminate()
        server.wait(timeout=30)
