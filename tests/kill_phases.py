"""SIGKILL loops sized by what they must hit. A process started with MSSQL_CDC_PHASE_LOG set
appends a line to that file at each step after which a crash leaves a distinct state on disk
(core/phase_log.h: "batch 7 bronze_appended", "wave 3 in_bronze"). A loop kills the process right
after the phase it aims at, reads where the kill landed from the log (its last line), and goes
on until every phase has been hit `times` times, aiming each kill at the phase hit least so far.
"""

import collections
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


def last_phase(log: Path):
    """The phase word of the log's last line ("bronze_appended"), or None when it is empty."""
    if not log.exists():
        return None
    lines = log.read_text().splitlines()
    return lines[-1].split()[-1] if lines else None


def kill_after(process, log: Path, phase, rng, timeout, jitter=0.02):
    """SIGKILLs `process` a moment (up to `jitter` seconds) after a new line of `phase` reaches
    `log`, or at `timeout` when none does; returns the phase the kill landed in (None when the
    process had ended by itself first)."""
    seen = len(log.read_text().splitlines()) if log.exists() else 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        lines = log.read_text().splitlines() if log.exists() else []
        if any(line.split()[-1] == phase for line in lines[seen:]):
            break
        time.sleep(0.003)
    time.sleep(rng.uniform(0, jitter))
    if process.poll() is not None:
        return None
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    return last_phase(log)
