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

import math
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lincls.paths import sqlite_path
from lincls.tracking.plain import plain_batch, plain_dataset, plain_file_location

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
RUN_NAME_TAG = "mlflow.runName"
USER_TAG = "mlflow.user"
LARGEST = 1.7976931348623157e308  # MLflow stores ±inf as the largest float of that sign


def _error(message: str, code: str = "INVALID_PARAMETER_VALUE") -> Exception:
    from mlflow.exceptions import MlflowException

    return MlflowException(message, error_code=code)


def _sanitized(value: float) -> tuple[float, int]:
    """(stored value, is_nan) as MLflow stores a metric value."""
    if math.isnan(value):
        return 0.0, 1
    if math.isinf(value):
        return (LARGEST if value > 0 else -LARGEST), 0
    return value, 0


def schema_matches(connection: sqlite3.Connection) -> bool:
    """Whether the store's tables have the columns this module writes (and reads)."""
    for table, columns in {**COLUMNS, **READ_COLUMNS}.items():
        found = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if table in READ_COLUMNS and not columns <= found:
            return False
        if table in COLUMNS and found != columns:
            return False
    return True


def _postgres(db: Any) -> bool:
    """Whether ``db`` is a PostgreSQL connection (``tracking.postgres_runs``), not SQLite's."""
    return getattr(db, "dialect", "sqlite") == "postgresql"


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
        tags = dict(tags)
        tagged = tags.get(RUN_NAME_TAG)
        if run_name and tagged and run_name != tagged:
            raise _error(
                f"Both 'run_name' argument and 'mlflow.runName' tag are specified, but with "
                f"different values (run_name='{run_name}', mlflow.runName='{tagged}')."
            )
        if not (run_name or tagged):
            from mlflow.utils.name_utils import _generate_random_name

            run_name = _generate_random_name()
        run_name = run_name or tagged
        tags.setdefault(RUN_NAME_TAG, run_name)
        run_id = uuid.uuid4().hex
        start = int(time.time() * 1000) if start_time is None else int(start_time)
        with self.transaction() as db:
            row = db.execute(
                "SELECT artifact_location, lifecycle_stage FROM experiments "
                "WHERE experiment_id = ?",
                (int(experiment_id),),
            ).fetchone()
            if row is None:
                raise _error(
                    f"No Experiment with id={experiment_id} exists", "RESOURCE_DOES_NOT_EXIST"
                )
            if row[1] != "active":
                raise _error(
                    f"The experiment {experiment_id} must be in the 'active' state. "
                    f"Current state is {row[1]}."
                )
            artifact_uri = _artifact_uri(row[0], run_id)
            db.execute(
                "INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name, "
                "user_id, status, start_time, end_time, source_version, lifecycle_stage, "
                "artifact_uri, experiment_id, deleted_time) "
                "VALUES (?, ?, 'UNKNOWN', '', '', ?, 'RUNNING', ?, NULL, '', 'active', ?, ?, NULL)",
                (run_id, run_name, tags.get(USER_TAG, "unknown"), start, artifact_uri,
                 int(experiment_id)),
            )  # fmt: skip
            db.executemany(
                "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)",
                [(key, value, run_id) for key, value in tags.items()],
            )
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
            _insert_params(db, run_id, params)
            _insert_metrics(db, run_id, points)
            _upsert_tags(db, run_id, tags)
            if dataset_input:
                _insert_input(db, row[0], run_id, dataset_input)
            if status is not None:
                end = int(time.time() * 1000) if end_time is None else int(end_time)
                db.execute(
                    "UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                    (status, end, run_id),
                )

    def set_tags(self, tags: Mapping[str, Mapping[str, str]]) -> None:
        """Tags of many runs (``{run_id: {key: value}}``) set in one transaction."""
        with self.transaction() as db:
            _upsert_many(
                db, [(k, str(v), r) for r, found in tags.items() for k, v in found.items()]
            )


def _validated(
    params: Mapping[str, str],
    metrics: Iterable[tuple[str, float, int, int]],
    tags: Mapping[str, str],
) -> tuple[list[tuple[str, str]], list[tuple[str, float, int, int, int]], list[tuple[str, str]]]:
    """MLflow's checks of a batch: names, lengths (values truncated where it truncates), and
    metric values, timestamps and steps; metric values stored as it stores them."""
    metrics = list(metrics)
    if plain_batch(params, metrics, tags):  # what MLflow's checks would pass unchanged
        return (
            [(key, str(value)) for key, value in params.items()],
            [_point(key, value, stamp, step) for key, value, stamp, step in metrics],
            [(key, str(value)) for key, value in tags.items()],
        )  # fmt: skip
    from mlflow.utils.validation import _validate_metric, _validate_param, _validate_tag

    checked_params = []
    for index, (key, value) in enumerate(params.items()):
        param = _validate_param(key, str(value), path=f"params[{index}]")
        checked_params.append((param.key, param.value))
    checked_tags = []
    for index, (key, value) in enumerate(tags.items()):
        tag = _validate_tag(key, str(value), path=f"tags[{index}]")
        checked_tags.append((tag.key, tag.value))
    points, names = [], set()
    for index, (key, value, timestamp, step) in enumerate(metrics):
        if key not in names or not isinstance(value, float):  # a name is checked once
            _validate_metric(key, value, timestamp, step, path=f"metrics[{index}]")
            names.add(key)
        points.append(_point(key, value, timestamp, step))
    return checked_params, points, checked_tags


def _point(key: str, value: float, timestamp: int, step: int) -> tuple[str, float, int, int, int]:
    """(name, stored value, timestamp, step, is_nan) of a checked metric point."""
    stored, is_nan = _sanitized(float(value))
    return key, stored, int(timestamp), int(step), is_nan


def _artifact_uri(location: str, run_id: str) -> str:
    """A new run's artifact URI under its experiment's artifact location, as MLflow makes it."""
    if plain_file_location(location):
        return f"{location.rstrip('/')}/{run_id}/artifacts"
    from mlflow.utils.uri import append_to_uri_path

    return append_to_uri_path(location, run_id, "artifacts")


def _insert_params(db: Any, run_id: str, params: list[tuple[str, str]]) -> None:
    if not params:
        return  # keys come from a mapping: never twice in one write
    existing = dict(db.execute("SELECT key, value FROM params WHERE run_uuid = ?", (run_id,)))
    changed = [
        {"key": k, "old_value": existing[k], "new_value": v}
        for k, v in params
        if k in existing and existing[k] != v
    ]
    if changed:
        raise _error(
            f"Changing param values is not allowed. Params were already logged='{changed}' "
            f"for run ID='{run_id}'."
        )
    db.executemany(
        "INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)",
        [(k, v, run_id) for k, v in params if k not in existing],
    )


def _insert_metrics(db: Any, run_id: str, points: list[tuple[str, float, int, int, int]]) -> None:
    """The points (a point logged twice is kept once) and each name's latest: the greatest
    (step, timestamp, value), the first of equals."""
    if not points:
        return
    postgres = _postgres(db)
    if postgres:  # is_nan is a boolean column there, an integer one on SQLite
        points = [(k, v, t, s, bool(nan)) for k, v, t, s, nan in points]
    db.executemany(
        ("INSERT INTO" if postgres else "INSERT OR IGNORE INTO")
        + " metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, ?, ?, ?)"
        + (" ON CONFLICT DO NOTHING" if postgres else ""),
        [(*point, run_id) for point in points],
    )
    latest: dict[str, tuple[str, float, int, int, int]] = {}
    for point in points:
        key, value, timestamp, step, _ = point
        best = latest.get(key)
        if best is None or (step, timestamp, value) > (best[3], best[2], best[1]):
            latest[key] = point
    stored = {
        row[0]: row[1:]
        for row in db.execute(
            "SELECT key, step, timestamp, value FROM latest_metrics WHERE run_uuid = ?", (run_id,)
        )
    }
    rows = []
    for key, (_, value, timestamp, step, is_nan) in latest.items():
        if key in stored and not (step, timestamp, value) > tuple(stored[key]):
            continue
        rows.append((key, value, timestamp, step, is_nan, run_id))
    db.executemany(
        "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key, run_uuid) DO UPDATE SET "
        "value = excluded.value, timestamp = excluded.timestamp, step = excluded.step, "
        "is_nan = excluded.is_nan",
        rows,
    )


def _upsert_many(db: Any, rows: list[tuple[str, str, str]]) -> None:
    """(key, value, run id) rows set as tags, a row's value replacing the tag's."""
    db.executemany(
        "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?) "
        "ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value",
        rows,
    )


def _upsert_tags(db: Any, run_id: str, tags: list[tuple[str, str]]) -> None:
    """Tags set, the last value of a key winning; the run-name tag renames the run too."""
    final = dict(tags)
    _upsert_many(db, [(k, v, run_id) for k, v in final.items()])
    if RUN_NAME_TAG in final:
        db.execute("UPDATE runs SET name = ? WHERE run_uuid = ?", (final[RUN_NAME_TAG], run_id))


def training_input(dataset: Mapping[str, str]) -> Any:
    """A run's data as MLflow's ``DatasetInput`` (source type ``code``, context ``train``) from
    its ``name``, ``digest``, ``source`` and ``profile``."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    entity = Dataset(
        name=dataset["name"],
        digest=dataset["digest"],
        source_type="code",
        source=dataset.get("source", "{}"),
        profile=dataset.get("profile"),
    )
    return DatasetInput(entity, tags=[InputTag("mlflow.data.context", "train")])


def _insert_input(db: Any, experiment_id: int, run_id: str, dataset: Mapping[str, str]) -> None:
    """The dataset (one row per experiment, name and digest) and its edge to the run."""
    if plain_dataset(dataset):  # what MLflow's checks pass unchanged: no MLflow import
        entity = SimpleNamespace(
            name=dataset["name"], digest=dataset["digest"], source_type="code",
            source=dataset.get("source", "{}"), schema=None, profile=dataset.get("profile"),
        )  # fmt: skip
        context = ("mlflow.data.context", "train")
    else:
        from mlflow.utils.validation import _validate_dataset_inputs

        given = training_input(dataset)
        _validate_dataset_inputs([given])
        entity, (tag,) = given.dataset, given.tags
        context = (tag.key, tag.value)
    if _postgres(db):  # another writer may add the same dataset meanwhile: its row is kept
        db.execute(
            "INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, "
            "dataset_source_type, dataset_source, dataset_schema, dataset_profile) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (uuid.uuid4().hex, experiment_id, entity.name, entity.digest, entity.source_type,
             entity.source, entity.schema, entity.profile),
        )  # fmt: skip
    found = db.execute(
        "SELECT dataset_uuid FROM datasets WHERE experiment_id = ? AND name = ? AND digest = ?",
        (experiment_id, entity.name, entity.digest),
    ).fetchone()
    if found is None:
        dataset_uuid = uuid.uuid4().hex
        db.execute(
            "INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, "
            "dataset_source_type, dataset_source, dataset_schema, dataset_profile) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (dataset_uuid, experiment_id, entity.name, entity.digest, entity.source_type,
             entity.source, entity.schema, entity.profile),
        )  # fmt: skip
    else:
        dataset_uuid = found[0]
    linked = db.execute(
        "SELECT 1 FROM inputs WHERE source_type = 'DATASET' AND source_id = ? "
        "AND destination_type = 'RUN' AND destination_id = ?",
        (dataset_uuid, run_id),
    ).fetchone()
    if linked is not None:
        return
    input_uuid = uuid.uuid4().hex
    db.execute(
        "INSERT INTO inputs (input_uuid, source_type, source_id, destination_type, "
        "destination_id, step) VALUES (?, 'DATASET', ?, 'RUN', ?, 0)",
        (input_uuid, dataset_uuid, run_id),
    )
    db.execute(
        "INSERT INTO input_tags (input_uuid, name, value) VALUES (?, ?, ?)",
        (input_uuid, *context),
    )
