"""Many tables: one ``to_delta`` stream per capture instance in one Spark session.

- ``start_many`` checks the ``{ci}`` templates of target, app_id and checkpoint, then every
  stream as ``to_delta`` checks it (options, capture instance, target, checkpoint, and the facts
  table once), before anything is written; creates the facts table once; then starts the streams
  in turn, each made ready (its bronze created, its snapshot taken) while the queries before it
  start, with at most two queries starting their sources at once, so that an availableNow run
  holds few queries' driver processes at once (five at once took the driver's peak memory from
  about 140 MB to 480 MB, at no gain in time on a classic session). A start that raises stops
  the queries already started and raises the error. Each stream is exactly the one
  ``stream(spark, options).to_delta(...)`` starts for its table alone: no state is added.
- ``await_all`` waits for every query (within one total timeout) and returns the error of
  each query that failed, by capture instance; it raises nothing.
- ``stop_all`` stops every query.
- ``is_data_loss`` and ``is_schema_changed`` pick out the failures that need a decision, from
  the error class itself or from the text Spark wraps it in.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.errors import StreamingQueryException

from mssql_cdc import _core, tables
from mssql_cdc._glue import copy_options, merged_options, set_option, without_options
from mssql_cdc.bronze_sink import engine_location
from mssql_cdc.errors import ConfigError, DataLossError, SchemaChangedError  # noqa: F401 (exported here too)
from mssql_cdc.errors import is_data_loss, is_schema_changed  # noqa: F401 (exported here too)
from mssql_cdc.pipeline import checked_start, stream
from mssql_cdc.types import SourceOptions, SparkSessionLike, StreamingQueryLike

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

_START_POLL_SECONDS = 0.1
_START_WAIT_SECONDS = 300.0
# Queries whose sources start at once. A source's start is mostly a Python process starting on
# the driver (the streaming source runner; on Spark Connect also the foreachBatch worker), CPU
# that one query leaves idle on a second core: two at once took twenty tables 25-30% less time
# than one at a time, on a classic session and through Connect alike (two cores). More would
# hold more processes' memory at once, and five at once gained nothing.
_STARTING_AT_ONCE = 2
# A wait with no end has missed its query's end through Spark Connect (4.2.1): the query had
# terminated a second after the wait began, and the wait went on for minutes. Waiting in slices
# and asking whether the query is still active between them bounds such a miss to one slice.
_AWAIT_SLICE_SECONDS = 5


Tables = str | Iterable[str] | Mapping[str, Mapping[str, Any]]


def _tables(capture_instances: Tables) -> list[tuple[str, dict[str, str]]]:
    if isinstance(capture_instances, str):
        return [(capture_instances, {})]
    if isinstance(capture_instances, Mapping):
        out = []
        for ci, overrides in capture_instances.items():
            out.append((ci, copy_options(overrides or {}, f"options of {ci!r}")))
        return out
    return [(ci, {}) for ci in capture_instances]


def _wait_until_source_started(query: Any, timeout: float = _START_WAIT_SECONDS) -> None:
    """Returns once `query` has left Spark's initialisation (its source is planning), or stopped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not query.isActive or query.recentProgress:
            return
        message = (query.status or {}).get("message", "")
        if message and not message.startswith("Initializing"):
            return
        time.sleep(_START_POLL_SECONDS)


def start_many(
    spark: SparkSessionLike,
    options: SourceOptions | Mapping[str, Any],
    capture_instances: Iterable[str] | Mapping[str, SourceOptions | Mapping[str, Any]],
    *,
    target: str,
    app_id: str,
    checkpoint: str,
    facts_table: str | None = None,
    **to_delta_kwargs: Any,
) -> dict[str, StreamingQuery]:
    """Starts one ``to_delta`` stream per capture instance; returns the queries by capture instance."""
    shared = copy_options(options)
    entries = _tables(capture_instances)
    names = [ci for ci, _ in entries]
    for ci in names:
        if not isinstance(ci, str) or not ci:
            raise ConfigError(f"start_many: capture instance names must be non-empty strings, not {ci!r}")
    # Every stream is checked (its options, capture instance and tables) before anything is
    # written; then the facts table is created, once.
    facts = tables.TableArg(facts_table, "facts_table") if facts_table is not None else None
    facts_statements = tables.prepare(spark, facts, "facts") if facts is not None else None
    checked = []
    for ci, overrides in entries:
        params = {name: _core.expand_template(value, ci, name)
                  for name, value in (("target", target), ("app_id", app_id), ("checkpoint", checkpoint))}
        overrides = without_options(copy_options(overrides, "per-table options"), "captureInstance")
        table_options = merged_options(shared, overrides)
        set_option(table_options, "captureInstance", ci)
        checked.append((ci, checked_start(stream(spark, table_options), params["target"], params["app_id"],
                                          params["checkpoint"], facts_table, facts_ready=True,
                                          **to_delta_kwargs)))
    facts_location = None
    if facts is not None:
        tables.ensure(spark, facts, "facts", statements=facts_statements)
        facts_location = engine_location(spark, facts)

    # Each stream is made ready (its tables created, its snapshot taken) while Spark starts the
    # sources of the ones before it; it starts once fewer than _STARTING_AT_ONCE are starting.
    queries: dict[str, Any] = {}
    starting: deque[Any] = deque()
    try:
        for ci, start in checked:
            writer = start.ready(facts_location)
            while len(starting) >= _STARTING_AT_ONCE:
                _wait_until_source_started(starting.popleft())
            query = queries[ci] = writer.start()
            starting.append(query)
        for query in starting:
            _wait_until_source_started(query)
    except BaseException:
        stop_all(queries)
        raise
    return queries


def await_all(queries: Mapping[str, StreamingQueryLike], *, timeout: float | None = None) -> dict[str, Exception]:
    """Waits for every query in turn, at most `timeout` seconds in all (None: until each ends);
    returns the errors of the queries that stopped with one, by capture instance.

    Spark's wait takes whole seconds here: each query is given the time left, rounded up to a
    whole second, and none once no time is left, so the whole wait may pass `timeout` by up to
    a second per query. A query is waited for in slices of at most five seconds, asking between
    them whether it is still active. A query's StreamingQueryException is returned, not raised;
    a query still running is absent from the result.
    """
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        raise TypeError(f"await_all: timeout must be a number of seconds or None, not {timeout!r}")
    if timeout is not None and timeout < 0:
        raise ValueError(f"await_all: timeout must be 0 or more seconds, not {timeout!r}")
    deadline = None if timeout is None else time.monotonic() + timeout
    for query in queries.values():
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                wait = _AWAIT_SLICE_SECONDS if left is None else min(_AWAIT_SLICE_SECONDS, math.ceil(left))
                if query.awaitTermination(wait) or not query.isActive:
                    break
        except StreamingQueryException:
            pass  # collected below
    failed: dict[str, Exception] = {}
    for ci, query in queries.items():
        error = query.exception()
        if error is not None:
            failed[ci] = error
    return failed


def stop_all(queries: Mapping[str, StreamingQueryLike]) -> None:
    """Stops every query (a stopped or failed one is left as it is)."""
    for query in queries.values():
        query.stop()
