"""The completeness verdict on Spark: ``finalized_until`` per table, in a control table.

The verdict is the engine's (``_core.finalization_*``): the end commit time of the last
committed batch truncated to the granularity, moved forward only, written to the control table
after the batch's data. This module adapts it to Spark:

- ``end_offset_from_progress`` reads a batch's end offset from a query's progress;
- ``advance``, ``finalized_until``, ``is_final``, ``candidate``, ``truncate`` and
  ``ensure_control_table`` call the engine;
- ``track`` advances a running query's verdict after each of its progress reports, from a
  ``StreamingQueryListener`` whose one worker thread writes the control table (failures are
  logged and counted, never passed to the query).

A control table is a table name or an absolute path or URI (``mssql_cdc.tables``). At a path
the engine writes it; under a name Spark runs the engine's forward-only MERGE
(``_core.advance_verdict_sql``), retried when a concurrent writer's commit conflicts with it.
Datetimes are naive UTC (aware ones are converted).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQueryListener

from mssql_cdc import _core, tables
from mssql_cdc.errors import ConfigError, NotFoundError
from mssql_cdc.migrations.control import (  # noqa: F401 (exported here too, as in the reference)
    APPLIED_COLUMNS, OPEN_COMMENTS, VERDICT_COMMENTS, WAVE_COLUMNS)
from mssql_cdc.tables import delta_table, retrying, table_ref  # noqa: F401 (exported here too)
from mssql_cdc.types import Freshness, Granularity, Offset, SparkSessionLike, StreamingQueryLike

if TYPE_CHECKING:
    from pyspark.sql.streaming.listener import (
        QueryIdleEvent,
        QueryProgressEvent,
        QueryStartedEvent,
        QueryTerminatedEvent,
    )

log = logging.getLogger("mssql_cdc")

# The control table as the engine defines it: columns as (name, Spark SQL type, comment), and
# its comment.
CONTROL_COLUMNS, CONTROL_COMMENT = _core.table_definition("control")
_ZERO_LSN = "0x" + "0" * 20
_WARN_EVERY_SECONDS = 600.0


def _utc_naive(value: datetime) -> datetime:
    if not isinstance(value, datetime):
        raise ConfigError(f"expected a datetime, not {value!r}")
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def _parse_time(text: str | None) -> datetime | None:
    if text is None:
        return None
    return datetime.fromisoformat(text.rstrip("Z")).replace(tzinfo=None)


def _offset_json(end_offset: Mapping[str, Any] | str | None) -> str | None:
    if end_offset is None:
        return None
    if isinstance(end_offset, str):
        end_offset = json.loads(end_offset)
    if not isinstance(end_offset, Mapping):
        raise ConfigError(f'an end offset is a mapping with "lsn" and "commit_ts", not {end_offset!r}')
    if not end_offset.get("commit_ts"):
        return None
    return json.dumps({"lsn": end_offset.get("lsn") or _ZERO_LSN, "commit_ts": end_offset["commit_ts"]})


def _progress_dict(progress: Any) -> Mapping[str, Any]:
    text = getattr(progress, "json", None)  # StreamingQueryProgress (a dict with a .json property)
    return json.loads(text) if isinstance(text, str) else progress


def end_offset_from_progress(progress: Mapping[str, Any] | None, *, source_index: int = 0) -> Offset | None:
    """The end offset of the batch a progress report describes (a StreamingQueryProgress or dict)."""
    if progress is None:
        return None
    sources = _progress_dict(progress).get("sources") or []
    if source_index >= len(sources):
        return None
    end = sources[source_index].get("endOffset")
    if isinstance(end, str):
        end = json.loads(end) if end not in ("", "None", "null") else None
    if not isinstance(end, Mapping) or "lsn" not in end:
        return None
    return {"lsn": end["lsn"], "commit_ts": end.get("commit_ts") or ""}


def candidate(end_offset: Mapping[str, Any] | None, *, granularity: Granularity = "hour") -> datetime | None:
    """The verdict an end offset supports: its commit time truncated to the granularity."""
    offset = _offset_json(end_offset)
    if offset is None:
        return None
    return _parse_time(_core.finalization_candidate(offset, granularity))


def truncate(ts: datetime, granularity: str = "hour") -> datetime:
    """`ts` (naive UTC, or aware) floored to the minute, hour or day."""
    stamp = _utc_naive(ts).isoformat(timespec="milliseconds")
    result = candidate({"lsn": _ZERO_LSN, "commit_ts": stamp}, granularity=granularity)
    assert result is not None
    return result


def _control(spark: Any, control_table: str) -> tables.TableArg:
    """The control table argument, created or brought up to date."""
    table = tables.TableArg(control_table, "control_table")
    tables.ensure(spark, table, "control")
    return table


def ensure_control_table(spark: SparkSessionLike, control_table: str) -> None:
    """Creates (or migrates) the control table."""
    _control(spark, control_table)


def _merge_verdict(spark: Any, control: tables.TableArg, sql: str) -> bool:
    """Runs the verdict MERGE; True when it changed a row. Commits lost to a conflict are
    retried as the engine retries its own (``tables.retry_conflicts``)."""
    return tables.retry_conflicts(lambda: int(spark.sql(sql).collect()[0]["num_affected_rows"]) > 0,
                                  lambda: tables.sql_version(spark, control.name))


def advance(
    spark: SparkSessionLike,
    control_table: str,
    table_name: str,
    end_offset: Mapping[str, Any] | None,
    *,
    granularity: Granularity = "hour",
) -> datetime | None:
    """Moves `table_name`'s verdict to the end offset's when later; returns the verdict after."""
    control = _control(spark, control_table)
    offset = _offset_json(end_offset)
    if offset is not None:
        if control.is_name:
            sql = _core.advance_verdict_sql(control.text, table_name, offset, granularity)
            if sql is not None and _merge_verdict(spark, control, sql):
                return _parse_time(_core.finalization_candidate(offset, granularity))
        else:
            moved_to = _core.finalization_advance(control_table, table_name, offset, granularity)
            if moved_to is not None:
                return _parse_time(moved_to)
    return finalized_until(spark, control_table, table_name)


def control_rows(spark: Any, control: tables.TableArg, name: str) -> Any:
    """`name`'s rows of a control table named in the catalog, as a pyarrow.Table for the engine
    to read by its own rules (None: no such table)."""
    if not tables.check(spark, control, "control"):
        return None
    return tables.read(spark, control).where(F.col("table_name") == name).toArrow()


def verdict_json(spark: Any, control: tables.TableArg, name: str) -> str | None:
    """`name`'s verdict as the engine's JSON ({finalized_until, end_lsn, end_commit_ts}), read by
    the engine's rule wherever the control table is; None when it has none."""
    if not control.is_name:
        return _core.read_verdict(control.text, name)
    rows = control_rows(spark, control, name)
    return None if rows is None else _core.verdict_among(rows, name)


def finalized_until(spark: SparkSessionLike, control_table: str, table_name: str) -> datetime | None:
    """`table_name`'s verdict: every period ending at or before it is complete; None when none."""
    control = tables.TableArg(control_table, "control_table")
    if not control.is_name:
        return _parse_time(_core.finalized_until(control_table, table_name))
    verdict = verdict_json(spark, control, table_name)
    return None if verdict is None else _parse_time(json.loads(verdict)["finalized_until"])


def position_of(spark: Any, control: tables.TableArg, silver_name: str) -> str | None:
    """Silver's position in the control table, as the JSON the engine reads (None: none yet)."""
    if not control.is_name:
        return _core.read_silver_position(control.text, silver_name)
    rows = control_rows(spark, control, silver_name)
    return None if rows is None else _core.silver_position_among(rows)


def freshness(spark: SparkSessionLike, control_table: str, table_name: str) -> Freshness:
    """How old `table_name`'s verdict is now, by this machine's clock: its ``finalized_until``
    and when it last moved, their ages in seconds, and the chunked snapshot still open on the
    table (whose waves hold its verdict), if any. Reads the control table without writing to
    it; the times and ages are None before the first verdict. NotFoundError when the control
    table does not exist."""
    control = tables.TableArg(control_table, "control_table")
    missing = NotFoundError(f"control_table={control_table!r} does not exist: a stream with a tracker, "
                            "finalization.advance() or apply_changes() creates it")
    if control.is_name:  # the table's rows read once, for both
        rows = control_rows(spark, control, table_name)
        if rows is None:
            raise missing
        verdict_text, position_text = _core.verdict_among(rows, table_name), _core.silver_position_among(rows)
    else:
        if not tables.check(spark, control, "control"):
            raise missing
        verdict_text = _core.read_verdict(control.text, table_name)
        position_text = _core.read_silver_position(control.text, table_name)
    verdict = json.loads(verdict_text or "{}")
    position = json.loads(position_text or "{}")
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    until = _parse_time(verdict.get("finalized_until"))
    updated = _parse_time(verdict.get("updated_at"))
    return Freshness(table_name=table_name, finalized_until=until, updated_at=updated,
                     age_seconds=None if until is None else (now - until).total_seconds(),
                     seconds_since_update=None if updated is None else (now - updated).total_seconds(),
                     open_snapshot_lsn=position.get("open_snapshot_lsn"))


def is_final(spark: SparkSessionLike, control_table: str, table_name: str, period_end: datetime) -> bool:
    """Whether the period ending at `period_end` (exclusive) is complete in `table_name`."""
    period_end = _utc_naive(period_end)
    if period_end.microsecond % 1000:  # the engine takes milliseconds: round up, never claim early
        period_end += timedelta(microseconds=1000 - period_end.microsecond % 1000)
    end = period_end.isoformat(timespec="milliseconds")
    if tables.TableArg(control_table, "control_table").is_name:
        verdict = finalized_until(spark, control_table, table_name)
        until = None if verdict is None else _utc_naive(verdict).isoformat(timespec="milliseconds")
        return bool(_core.verdict_covers(until, end))
    return bool(_core.is_final(control_table, table_name, end))


class FinalizationListener(StreamingQueryListener):
    """Advances one query run's verdict after each of its progress reports (see ``track``)."""

    def __init__(
        self,
        spark: SparkSessionLike,
        run_id: str,
        control_table: str,
        table_name: str,
        *,
        granularity: Granularity = "hour",
    ):
        super().__init__()
        truncate(datetime(2000, 1, 1), granularity)  # a bad granularity fails here, not later
        _control(spark, control_table)
        self._spark = spark
        self.run_id = str(run_id)
        self.control_table = control_table
        self.table_name = table_name
        self.granularity = granularity
        self.last_error: Exception | None = None
        self.failures = 0
        self._verdict: datetime | None = None
        self._pending: tuple[int, dict[str, str]] | None = None
        self._newest_batch = -1
        self._ended = False
        self._lock = threading.Condition()
        self._last_warning = 0.0
        self._worker = threading.Thread(target=self._run, name=f"mssql_cdc-finalization-{table_name}",
                                        daemon=True)
        self._worker.start()

    # ---- listener callbacks (Spark's listener thread; they only hand work over)
    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        pass

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        progress = event.progress
        if str(progress.runId) == self.run_id:
            self.offer(progress)

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        pass

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        if str(event.runId) == self.run_id:
            self.end()

    # ---- work
    def offer(self, progress: Any) -> None:
        """Hands a progress report over; a newer batch replaces one still waiting."""
        if progress is None:
            return
        doc = _progress_dict(progress)
        batch_id = doc.get("batchId", -1)
        end = end_offset_from_progress(doc)
        if end is None:
            return
        with self._lock:
            if batch_id >= self._newest_batch:
                self._newest_batch = batch_id
                self._pending = (batch_id, end)
                self._lock.notify_all()

    def end(self) -> None:
        """The query ended: apply what is waiting, then stop the worker."""
        with self._lock:
            self._ended = True
            self._lock.notify_all()

    def join(self, *, timeout: float | None = None) -> bool:
        """Waits until the query ended and its last verdict is written; False if `timeout` passed first."""
        self._worker.join(timeout)
        return not self._worker.is_alive()

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._pending is None and not self._ended:
                    self._lock.wait()
                pending, self._pending = self._pending, None
                ended = self._ended
            if pending is not None:
                self._apply(pending[1])
            if ended and pending is None:
                break
        try:
            self._spark.streams.removeListener(self)
        except Exception as e:  # noqa: BLE001 (the verdicts are written; this is housekeeping)
            log.warning("mssql_cdc: could not remove the finalization listener of %s: %s", self.table_name, e)

    def _apply(self, end: dict[str, str]) -> None:
        try:
            moved_to = candidate(end, granularity=self.granularity)
            if moved_to is None or (self._verdict is not None and moved_to <= self._verdict):
                return  # would not move the verdict: no control commit
            self._verdict = advance(self._spark, self.control_table, self.table_name, end,
                                    granularity=self.granularity)
            self.failures = 0
        except Exception as e:  # noqa: BLE001 (a failure never touches the query)
            self.last_error = e
            self.failures += 1
            now = time.monotonic()
            if self.failures == 1:
                log.error("mssql_cdc: advancing the verdict of %s failed", self.table_name, exc_info=True)
                self._last_warning = now
            elif now - self._last_warning >= _WARN_EVERY_SECONDS:
                log.warning("mssql_cdc: advancing the verdict of %s still fails (%d times): %s",
                            self.table_name, self.failures, e)
                self._last_warning = now


def track(
    spark: SparkSessionLike,
    query: StreamingQueryLike,
    control_table: str,
    table_name: str,
    *,
    granularity: Granularity = "hour",
) -> FinalizationListener:
    """Advances `table_name`'s verdict after each progress of `query`'s current run."""
    listener = FinalizationListener(spark, query.runId, control_table, table_name, granularity=granularity)
    spark.streams.addListener(listener)
    listener.offer(query.lastProgress)
    if not query.isActive:
        listener.end()
    return listener
