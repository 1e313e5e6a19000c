"""What a Spark checkpoint holds: the newest offsets entry this release must be able to read and
the end offset of the last batch Spark committed, read before a query starts, and which batch
an offset ends, read while it runs.

A checkpoint is a local (or Volume) path, read through this process's file system, or a URI
(``s3a://``, ``abfss://``, ``gs://``, ...), read through Spark's own file systems, which are the
ones the query will write it with, on a classic session and on Spark Connect alike. Spark writes
``offsets/<n>`` (the offset log version, the batch's metadata, then one line per source) before
batch n and ``commits/<n>`` after it.
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import Any

from pyspark.errors import AnalysisException

from mssql_cdc import _core
from mssql_cdc.errors import ConfigError

# The offset log version of Spark's checkpoints that this package reads (its first line).
_OFFSET_LOG_VERSION = "v1"


class SparkCheckpoint:
    """One checkpoint location; nothing is read until asked, nothing is ever written."""

    def __init__(self, spark: Any, location: str) -> None:
        self._spark = spark
        self.location = location
        self._local = os.path.isabs(location)

    def _entries(self, log: str) -> list[int]:
        """The batch numbers of `log` (offsets or commits); none when it does not exist yet."""
        if self._local:
            directory = os.path.join(self.location, log)
            names = os.listdir(directory) if os.path.isdir(directory) else []
        else:
            names = [posixpath.basename(path) for path in self._paths(log)]
        return [int(name) for name in names if name.isdigit()]

    def _paths(self, log: str) -> list[str]:
        directory = self.location.rstrip("/") + "/" + log
        try:
            rows = self._spark.read.format("binaryFile").load(directory).select("path").collect()
        except AnalysisException as error:
            if error.getCondition() == "PATH_NOT_FOUND":
                return []
            raise ConfigError(f"checkpoint {self.location}: Spark cannot list {directory}: "
                              f"{str(error).splitlines()[0][:500]}. Give a checkpoint Spark can read and "
                              "write (its file system's jars and credentials set on the session)") from None
        return [str(row["path"]) for row in rows]

    def _read(self, log: str, batch: int) -> list[str]:
        """The lines of entry `batch` of `log`."""
        if self._local:
            with open(os.path.join(self.location, log, str(batch)), encoding="utf-8") as f:
                return f.read().splitlines()
        path = self.location.rstrip("/") + f"/{log}/{batch}"
        rows = self._spark.read.format("binaryFile").load(path).select("content").collect()
        return bytes(rows[0]["content"]).decode("utf-8").splitlines() if rows else []

    @staticmethod
    def _source_offset(lines: list[str]) -> str | None:
        """The source's offset line of an offsets entry; None when the entry records none."""
        if len(lines) < 3 or lines[2].strip() in ("", "-"):
            return None
        return lines[2]

    def batch_ending_at(self, end: dict) -> int:
        """Spark's id of the batch whose end offset is `end`: the newest offsets/<n> recording it."""
        for n in sorted(self._entries("offsets"), reverse=True):
            offset = self._source_offset(self._read("offsets", n))
            if offset is not None and json.loads(offset) == end:
                return n
        raise ConfigError(f"checkpoint {self.location}: no offsets entry records the batch ending at "
                          f"{json.dumps(end)}; Spark plans a batch only after recording it, so the checkpoint was "
                          "changed while the query ran. Stop the query and start it again")

    def check_readable(self) -> None:
        """Refuses, before anything is written, a checkpoint whose newest offsets entry this
        release cannot read: an offset log of another version, or a source offset that is not an
        offset of this source (written by another release or another source)."""
        entries = self._entries("offsets")
        if not entries:
            return
        name = f"offsets/{max(entries)}"
        lines = self._read("offsets", max(entries))
        fix = ("give a new checkpoint (and a new app_id; bootstrap or startingLsn says where the stream "
               "starts), or run the release that wrote it")
        if not lines or lines[0].strip() != _OFFSET_LOG_VERSION:
            found = lines[0].strip()[:20] if lines else "nothing"
            raise ConfigError(f"checkpoint {self.location}: {name} is an offset log entry of version {found!r}, "
                              f"which this release does not read (it reads {_OFFSET_LOG_VERSION!r}): {fix}")
        offset = self._source_offset(lines)
        if offset is not None:
            try:
                _core.offset_json(offset)
            except ConfigError as error:
                raise ConfigError(f"checkpoint {self.location}: {name} holds a source offset this release does "
                                  f"not read ({error}): {fix}") from None

    def last_processed(self) -> str | None:
        """The offset JSON the checkpoint has processed: the end offset of its highest batch with
        a commit marker; None when it has committed none."""
        done = self._entries("commits")
        if not done:
            return None
        lines = self._read("offsets", max(done))
        if len(lines) < 3:
            raise ConfigError(f"checkpoint {self.location}: offsets/{max(done)} is not a Spark offset log entry")
        return json.dumps(json.loads(lines[2]))
