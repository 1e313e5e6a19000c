"""SIGKILL loops sized by what they must hit. A process started with MSSQL_CDC_PHASE_LOG set
appends a line to that file at each step after which a crash leaves a distinct state on disk
(core/phase_log.h: "dbo_orders batch 7 bronze_appended", "dbo_customers wave 3 in_bronze"). A
loop starts the process to stop at the phase it aims at (MSSQL_CDC_PHASE_PAUSE), kills it
there, reads where the kill landed from the log (that stream's last line), and goes on until
every phase has been hit `times` times, aiming each kill at the phase hit least so far. The
process's other streams are wherever they are when it is killed.
"""

import collections
import os
import signal
import time
from pathlib import Path


class KillPlan:
    def __init__(self, phases, times, max_kills):
        self.phases, self.times, self.max_kills = list(phases), times, max_kills
        self.landed = collections.Counter()
        self.kills = 0

    def done(self):
        return all(self.landed[p] >= self.times for p in self.phases) or self.kills >= self.max_kills

    def aim(self):
        """The phase to aim the next kill at: the one hit least so far."""
        return min(self.phases, key=lambda p: (self.landed[p], self.phases.index(p)))

    def assert_covered(self):
        short = {p: self.landed[p] for p in self.phases if self.landed[p] < self.times}
        assert not short, f"phases hit fewer than {self.times} times in {self.kills} kills: {short}; all: {dict(self.landed)}"


def lines_of(log: Path):
    return log.read_text().splitlines() if log.exists() else []


def phase_env(log: Path, phase):
    """The environment of a process to be killed at `phase`: it logs its phases to `log` and
    stops for good at the first step of that name (core/phase_log.h)."""
    return dict(os.environ, MSSQL_CDC_PHASE_LOG=str(log), MSSQL_CDC_PHASE_PAUSE=phase)


def kill_at(process, log: Path, phase, timeout):
    """SIGKILLs `process`, started with phase_env(log, phase), once it has stopped at `phase`, or
    at `timeout` when it never gets there; returns the phase the kill landed in: the last line
    of the stream that stopped (None when the process had ended by itself first)."""
    seen = len(lines_of(log))
    deadline = time.monotonic() + timeout
    stream = None
    while time.monotonic() < deadline and process.poll() is None and stream is None:
        new = lines_of(log)[seen:]
        stream = next((line.split()[0] for line in new if line.split()[-1] == phase), None)
        if stream is None:
            time.sleep(0.01)
    if process.poll() is not None:
        return None
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    mine = [line for line in lines_of(log)[seen:] if stream is None or line.split()[0] == stream]
    return mine[-1].split()[-1] if mine else None
