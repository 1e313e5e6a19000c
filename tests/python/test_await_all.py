"""``await_all``'s arithmetic of whole seconds (spec 1.11), on a clock the queries move: each
query is given the time left rounded up to a whole second, in slices of at most five seconds,
none once no time is left, and the errors of every query that stopped with one come back. Real
queries wait in tests/spark."""

import pytest

from mssql_cdc import fanout


class Clock:
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now


class Query:
    """A query that runs for `runs_for` seconds of the clock, then ends (with `error`)."""

    def __init__(self, clock, runs_for, error=None):
        self.clock, self.runs_for, self.error = clock, runs_for, error
        self.waits = []

    def awaitTermination(self, timeout=None):
        self.waits.append(timeout)
        spent = self.runs_for if timeout is None else min(self.runs_for, timeout)
        self.clock.now += spent
        self.runs_for -= spent
        return self.runs_for == 0

    @property
    def isActive(self):
        return self.runs_for > 0

    def exception(self):
        return self.error if self.runs_for == 0 else None


class MissedEndQuery(Query):
    """A query whose wait misses its end (as one through Spark Connect has): it ends at once,
    but a wait on it lasts its whole timeout and says it has not ended."""

    def awaitTermination(self, timeout=None):
        self.waits.append(timeout)
        self.runs_for = 0
        self.clock.now += 1000 if timeout is None else timeout
        return False


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(fanout.time, "monotonic", clock.monotonic)
    return clock


def test_each_query_gets_the_time_left_in_whole_seconds_rounded_up(clock):
    queries = {"a": Query(clock, 0.3), "b": Query(clock, 1.2), "c": Query(clock, 0.2)}
    assert fanout.await_all(queries, timeout=3) == {}
    assert [q.waits for q in queries.values()] == [[3], [3], [2]]


def test_no_time_left_waits_for_no_more_queries(clock):
    queries = {"a": Query(clock, 10), "b": Query(clock, 10)}
    assert fanout.await_all(queries, timeout=2.5) == {}
    assert [q.waits for q in queries.values()] == [[3], []]
    assert fanout.await_all({"c": Query(clock, 1)}, timeout=0) == {}


def test_without_a_timeout_every_query_is_waited_for_to_its_end_in_slices(clock):
    queries = {"a": Query(clock, 50), "b": Query(clock, 72)}
    assert fanout.await_all(queries) == {}
    assert [q.waits for q in queries.values()] == [[5] * 10, [5] * 15]


def test_a_wait_that_misses_its_query_ending_lasts_one_slice(clock):
    queries = {"a": MissedEndQuery(clock, 3), "b": Query(clock, 1)}
    assert fanout.await_all(queries) == {}
    assert [q.waits for q in queries.values()] == [[5], [5]]
    assert clock.now == 100 + 5 + 1


def test_every_query_that_stopped_with_an_error_is_reported_and_none_raised(clock):
    first, second = RuntimeError("first"), RuntimeError("second")
    queries = {"a": Query(clock, 1, first), "b": Query(clock, 1), "c": Query(clock, 1, second),
               "d": Query(clock, 100, RuntimeError("still running"))}
    assert fanout.await_all(queries, timeout=5) == {"a": first, "c": second}


def test_a_timeout_that_is_not_a_number_of_seconds_is_refused(clock):
    for bad in ("3", True, [1]):
        with pytest.raises(TypeError, match="timeout must be a number of seconds"):
            fanout.await_all({}, timeout=bad)
    with pytest.raises(ValueError, match="0 or more seconds"):
        fanout.await_all({}, timeout=-1)
