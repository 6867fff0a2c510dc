"""MLflow runs written as rows of MLflow's SQLite store: a run's creation in one transaction, and
its params, metrics, tags, dataset input and close in one more.

MLflow's SQLAlchemy store builds an ORM object for every row and commits each part of a run on
its own: creating a run, one ``log_batch`` of ~60 params and ~150 metric points, its dataset
input and its close cost ~30 ms of CPU, more than the run's learning. Written with SQL, the same
rows cost ~2 ms. They are MLflow's own rows, written as its store writes them for a new run:
``tests/test_sqlite_runs.py`` writes runs both ways and compares every table of the two files.
Names and values pass MLflow's own validation, so what it refuses is refused and what it
truncates is truncated. ``SqliteRuns.open`` gives a writer only for a store whose tables have
exactly the columns written here; any other store (another schema, a server, PostgreSQL) gets
MLflow's calls (``lincls.tracking.postgres_runs`` writes the same rows to PostgreSQL).

On SQLite a transaction is ``BEGIN IMMEDIATE``: concurrent writers wait for the write lock (up
to ``timeout``) instead of failing half-way; a failure rolls the whole part back."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lincls.paths import sqlite_path
from lincls.tracking.indexes import add_indexes
from lincls.tracking.run_rows import (
    RUN_NAME_TAG,
    _error,
    _experiment_location,
    _insert_run,
    _log,
    _named,
    _upsert_many,
    _validated,
    new_run_id,
)

# The columns of each table written (exactly these: a store of another schema is not written).
COLUMNS: dict[str, frozenset[str]] = {
    "runs": frozenset(
        "run_uuid name source_type source_name entry_point_name user_id status start_time "
        "end_time source_version lifecycle_stage artifact_uri experiment_id deleted_time".split()
    ),
    "tags": frozenset({"key", "value", "run_uuid"}),
    "params": frozenset({"key", "value", "run_uuid"}),
    "metrics": frozenset({"key", "value", "timestamp", "run_uuid", "step", "is_nan"}),
    "latest_metrics": frozenset({"key", "value", "timestamp", "step", "is_nan", "run_uuid"}),
    "datasets": frozenset(
        "dataset_uuid experiment_id name digest dataset_source_type dataset_source "
        "dataset_schema dataset_profile".split()
    ),
    "inputs": frozenset(
        {"input_uuid", "source_type", "source_id", "destination_type", "destination_id", "step"}
    ),
    "input_tags": frozenset({"input_uuid", "name", "value"}),
}
# Read, not written: these columns must be there.
READ_COLUMNS = {"experiments": frozenset({"experiment_id", "artifact_location", "lifecycle_stage"})}
CHECKPOINT_PAGES = 10_000  # the write-ahead log is copied into the database past this size
JOURNAL_LIMIT_BYTES = 2 * CHECKPOINT_PAGES * 4096  # the log's size kept after a checkpoint


def schema_matches(connection: sqlite3.Connection) -> bool:
    """Whether the store's tables have the columns this module writes (and reads)."""
    for table, columns in {**COLUMNS, **READ_COLUMNS}.items():
        found = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if table in READ_COLUMNS and not columns <= found:
            return False
        if table in COLUMNS and found != columns:
            return False
    return True


class SqliteRuns:
    """Creates and writes runs of one MLflow SQLite store (module docstring)."""

    BEGIN = "BEGIN IMMEDIATE"  # the write lock first: concurrent writers wait, never fail half-way

    def __init__(self, path: str | Path, timeout: float = 5.0) -> None:
        self.path = str(path)
        self.timeout = float(timeout)
        self._connections: dict[int, sqlite3.Connection] = {}
        self._lock = threading.RLock()  # one transaction at a time on the shared connection

    @classmethod
    def open(cls, uri: str, timeout: float = 5.0) -> SqliteRuns | None:
        """A writer of the SQLite store at ``uri`` (created and migrated by MLflow already), or
        None: not a SQLite store, or tables of a schema other than the one written here."""
        db = sqlite_path(uri)
        if db is None or not db.is_file():
            return None
        writer = cls(db, timeout)
        try:
            matches = schema_matches(writer.connection())
        except sqlite3.Error:
            matches = False
        if not matches:
            writer.close()
            return None
        add_indexes(writer.connection().execute)
        return writer

    def connection(self) -> sqlite3.Connection:
        """This process's connection (a connection never crosses a fork)."""
        pid = os.getpid()
        if pid not in self._connections:
            self._connections.clear()  # a parent's, inherited through fork: not ours to close
            connection = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")  # as lincls opens a store (store.use_wal)
            connection.execute("PRAGMA synchronous=NORMAL")
            # A run dirties ~200 pages (MLflow's keys lead its indexes), mostly the same ones run
            # after run: copying the log back every 10,000 pages rather than SQLite's 1,000
            # writes each such page once, not ten times (~25 % of a run's write).
            connection.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
            # A reader holding its snapshot (a report of a big study) keeps checkpoints from
            # reaching the log's end, which then grows by every commit meanwhile (2.1 GB while
            # a 100,000-run report read a million-config sweep's store); SQLite never shrinks a
            # log unless told, so a sweep kept it at its peak: cut back once it is copied.
            connection.execute(f"PRAGMA journal_size_limit={JOURNAL_LIMIT_BYTES}")
            self._connections[pid] = connection
        return self._connections[pid]

    def close(self) -> None:
        """Close this process's connection."""
        connection = self._connections.pop(os.getpid(), None)
        if connection is not None:
            connection.close()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """``BEGIN`` (``IMMEDIATE`` on SQLite) … ``COMMIT``; rolled back whole on any failure."""
        with self._lock:
            connection = self.connection()
            connection.execute(self.BEGIN)
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:  # a failed COMMIT leaves it open too
                    connection.execute("ROLLBACK")
                raise

    def create(
        self,
        experiment_id: str,
        run_name: str | None,
        tags: Mapping[str, str],
        start_time: int | None = None,
    ) -> tuple[str, str]:
        """A RUNNING run with ``tags``, as ``MlflowClient.create_run`` makes it; (id, artifact
        URI)."""
        tags = _named(run_name, tags)
        run_name = tags[RUN_NAME_TAG]
        run_id = new_run_id()
        start = int(time.time() * 1000) if start_time is None else int(start_time)
        with self.transaction() as db:
            artifact_uri = _insert_run(db, experiment_id, run_id, run_name, tags, start)
        return run_id, artifact_uri

    def finish(
        self,
        run_id: str,
        params: Mapping[str, str] = {},
        metrics: Iterable[tuple[str, float, int, int]] = (),
        tags: Mapping[str, str] = {},
        dataset_input: Mapping[str, str] | None = None,
        status: str | None = "FINISHED",
        end_time: int | None = None,
    ) -> None:
        """Log ``params``, ``metrics`` (key, value, timestamp, step), ``tags`` and a dataset input
        (``name``, ``digest``, ``source``, ``profile``; context ``train``) to a run, and close it
        with ``status`` (None: leave it open) — as MLflow's ``log_batch``, ``log_inputs`` and
        ``set_terminated`` would, in one transaction."""
        params, points, tags = _validated(params, metrics, tags)
        with self.transaction() as db:
            row = db.execute(
                "SELECT experiment_id, lifecycle_stage FROM runs WHERE run_uuid = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise _error(f"Run with id={run_id} not found", "RESOURCE_DOES_NOT_EXIST")
            if row[1] != "active":
                raise _error(
                    f"The run {run_id} must be in the 'active' state. Current state is {row[1]}."
                )
            _log(db, row[0], run_id, params, points, tags, dataset_input)
            if status is not None:
                end = int(time.time() * 1000) if end_time is None else int(end_time)
                db.execute(
                    "UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                    (status, end, run_id),
                )

    def write_many(self, experiment_id: str, runs: Iterable[Mapping[str, Any]]) -> list[str]:
        """Runs measured already, each created and closed in one transaction for them all: the
        rows ``create`` then ``finish`` would leave. A run: ``run_name``, ``tags`` (at its
        creation), ``params``, ``metrics`` (key, value, timestamp, step), ``final_tags``,
        ``dataset_input``, ``status``, ``start_time``, ``end_time`` and its ``run_id`` (made
        here if None). Their ids, in order; nothing is written if any is refused."""
        checked = []
        for run in runs:
            tags = _named(run.get("run_name"), run["tags"])
            logged = _validated(run.get("params", {}), run["metrics"], run.get("final_tags", {}))
            checked.append((run.get("run_id") or new_run_id(), tags, logged, run))
        with self.transaction() as db:
            location = _experiment_location(db, experiment_id)  # once for the whole batch
            for run_id, tags, (params, points, final_tags), run in checked:
                times = (int(run["start_time"]), run["status"], int(run["end_time"]), location)
                _insert_run(db, experiment_id, run_id, tags[RUN_NAME_TAG], tags, *times)
                _log(db, int(experiment_id), run_id, params, points, final_tags,
                     run.get("dataset_input"))  # fmt: skip
        return [run_id for run_id, *_ in checked]

    def set_tags(self, tags: Mapping[str, Mapping[str, str]]) -> None:
        """Tags of many runs (``{run_id: {key: value}}``) set in one transaction."""
        with self.transaction() as db:
            _upsert_many(
                db, [(k, str(v), r) for r, found in tags.items() for k, v in found.items()]
            )
