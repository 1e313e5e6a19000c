"""A stream's metrics directory (``metricsPath``): small JSON files the planner and Spark's
tasks leave for the sink.

Files go through ``pyarrow.fs``, so the directory may be a local path or a URI pyarrow opens
(``file://``, ``s3://``, ``abfss://``, ``gs://``, ``hdfs://``), with the node's default
credentials or the URI's query options.

Promises: a file appears whole: written under a temporary name and renamed on a local
filesystem, uploaded in one piece elsewhere (an object store shows an object only once its
upload completed). Writing a name again replaces the file, so a retried task leaves one.
Names are listed in text order. A location pyarrow cannot open (``dbfs:/``, a relative path)
is refused with a ConfigError (a ValueError) when the MetricsDir is made, and ``probe`` tells
a directory that cannot be written before a query starts.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.fs as pafs

from mssql_cdc.errors import ConfigError


class MetricsDir:
    """One stream's metrics directory; pickles as its location (tasks reopen it)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._fs, self._path = _open(location)

    def __getstate__(self) -> dict:
        return {"location": self.location}

    def __setstate__(self, state: dict) -> None:
        # Opened on first use: a task that cannot reach the store fails its metrics, not its read.
        self.location = state["location"]
        self._fs, self._path = None, ""

    @property
    def _filesystem(self) -> pafs.FileSystem:
        if self._fs is None:
            self._fs, self._path = pafs.FileSystem.from_uri(self.location)
        return self._fs

    def __repr__(self) -> str:
        return f"MetricsDir({self.location!r})"

    def _file(self, name: str) -> str:
        return self._path.rstrip("/") + "/" + name

    def write(self, name: str, text: str) -> None:
        """Writes `text` as file `name`, whole; OSError (or pyarrow's error) when it cannot."""
        fs = self._filesystem
        fs.create_dir(self._path, recursive=True)
        data = text.encode()
        if isinstance(fs, pafs.LocalFileSystem):
            tmp = self._file(f".tmp-{uuid.uuid4().hex}")
            with fs.open_output_stream(tmp) as out:
                out.write(data)
            fs.move(tmp, self._file(name))
        else:
            with fs.open_output_stream(self._file(name)) as out:
                out.write(data)

    def names(self, prefix: str) -> list[str]:
        """The names of the files starting with `prefix`, in text order; none when the directory is missing."""
        fs = self._filesystem
        found = []
        for info in fs.get_file_info(pafs.FileSelector(self._path, allow_not_found=True)):
            if info.type == pafs.FileType.File and info.base_name.startswith(prefix):
                found.append(info.base_name)
        return sorted(found)

    def read(self, name: str) -> str:
        fs = self._filesystem
        with fs.open_input_stream(self._file(name)) as f:
            return f.read().decode()

    def delete(self, name: str) -> None:
        """Deletes file `name`; nothing when it is gone already."""
        fs = self._filesystem
        try:
            fs.delete_file(self._file(name))
        except FileNotFoundError:
            pass

    def probe(self, what: str = "metricsPath") -> None:
        """Creates the directory and writes and deletes a file there; ConfigError when it cannot,
        leaving no directory it made behind."""
        fs = self._filesystem
        missing = self._missing_local_dirs(fs)
        name = f".probe-{uuid.uuid4().hex}"
        try:
            self.write(name, "{}")
            self.delete(name)
        except (OSError, pa.ArrowException) as e:
            for path in missing:  # deepest first
                try:
                    fs.delete_dir(path)
                except (OSError, pa.ArrowException):
                    pass
            raise ConfigError(f"{what} {self.location!r} cannot be written: {e}. Give a directory "
                              f"the driver and the executors can write") from None

    def _missing_local_dirs(self, fs: pafs.FileSystem) -> list[str]:
        """The directories a local write would create, deepest first (none elsewhere)."""
        if not isinstance(fs, pafs.LocalFileSystem):
            return []
        missing, path = [], self._path.rstrip("/")
        while path and fs.get_file_info(path).type == pafs.FileType.NotFound:
            missing.append(path)
            path = path.rsplit("/", 1)[0]
        return missing


def _open(location: str) -> tuple[pafs.FileSystem, str]:
    try:
        return pafs.FileSystem.from_uri(location)
    except (pa.ArrowException, ValueError, TypeError, OSError) as e:
        hint = ""
        if location.startswith("dbfs:"):
            hint = (" On Databricks give its FUSE path (/dbfs/...) or a Unity Catalog volume "
                    "(/Volumes/<catalog>/<schema>/<volume>/...).")
        raise ConfigError(f"metricsPath {location!r} cannot be opened by pyarrow.fs: {e}. Give an "
                          f"absolute local path or a file://, s3://, abfss://, gs:// or hdfs:// "
                          f"URI.{hint}") from None
