"""Ending a background `mssql-cdc sim workload` process, for the crash tests of every folder."""

import signal
import subprocess


def stop_workload(process):
    """Ends the workload as Ctrl-C does (it commits what it began), killing it when it has not
    ended within 30 seconds. Returns its stderr when it was piped."""
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return stderr
