"""MLflow: where the store is, and one run written with one batched call.

A run is created (RUNNING), then written with a single ``log_batch`` holding its params, metrics
and tags, then closed FINISHED (``finish_run``); one call per metric point costs ~50× more on
SQLite. A measured run's metrics and tags are a few rows and its record (``tracking.record``:
its other values and its curves in one tag). On a SQLite store these are MLflow's rows written
with SQL (``sqlite_runs``): the creation in one transaction, the whole write and close in one
more, ~15× cheaper than MLflow's ORM. A run that fails after it was created is closed FAILED
with the error in the tag ``error``.
"""

from __future__ import annotations

import atexit
import functools
import math
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lincls.figures import with_figure
from lincls.paths import (
    default_tracking_uri,
    home,
    project_root,
    resolve_tracking_uri,
    sqlite_path,
)
from lincls.tracking.creation import NewExperiment
from lincls.tracking.experiment_note import EXPERIMENT_NOTE
from lincls.tracking.postgres_runs import open_rows
from lincls.tracking.record import Written
from lincls.tracking.relocate import relocate
from lincls.tracking.run_rows import training_input
from lincls.tracking.schema import check_store, read_only
from lincls.tracking.sqlite_runs import SqliteRuns
from lincls.tracking.store import (
    DEFAULT_RETRY_SECONDS,
    Budgeted,
    StoreError,
    check_uri,
    configure_http,
    create_run_once,
    store_lock,
    use_wal,
)
from lincls.tracking.tags import NOTE_TAG
from lincls.tracking.tags import git_commit as git_commit  # where the store's users look
from lincls.tracking.view import (
    VIEW_COLUMNS,
    VIEW_TAG,
    ui_path,
    view_state,
    view_ui_state,
)

__all__ = [
    "VIEW_COLUMNS",
    "VIEW_TAG",
    "StoreError",
    "default_tracking_uri",
    "home",
    "project_root",
    "resolve_tracking_uri",
    "ui_path",
    "view_ui_state",
]  # re-exported

DEFAULT_EXPERIMENT = "lincls"
PARAM_VALUE_LIMIT = 6000
# The UI opens an experiment of this kind on its runs table, not on the GenAI traces page.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}


def artifact_root(uri: str) -> str | None:
    """Where a SQLite store keeps artifacts: ``mlartifacts/`` beside the database file."""
    db = sqlite_path(uri)
    return None if db is None else (db.parent / "mlartifacts").resolve().as_uri()


_OPENED: dict[tuple[str, str], tuple[Any, str]] = {}


@atexit.register
def _checkpoint_stores() -> None:
    """At the process's end, move what it wrote to each SQLite store it opened from the store's
    write-ahead log into the file itself (``wal_checkpoint(TRUNCATE)``, leaving the log empty):
    a process that ends without closing its connections (a single run ends at once) left its
    run in ``mlflow.db-wal`` alone, and a copy of ``mlflow.db`` without it lost the run. A store
    another process is busy with is left to that process (its own end checkpoints it)."""
    import sqlite3

    for uri, _ in list(_OPENED):
        db = sqlite_path(uri)
        if db is None or not db.is_file():
            continue
        try:
            connection = sqlite3.connect(db, timeout=1.0)
            try:
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                connection.close()
        except sqlite3.Error:
            pass


def open_experiment(
    uri: str,
    name: str = DEFAULT_EXPERIMENT,
    retry_seconds: float | None = None,
    experiment_id: str | None = None,
):
    """A client of the store at ``uri`` and the id of experiment ``name`` (created if missing).

    The URI and the database are checked first (``store.check_uri``, ``store.check_store``:
    ``LinclsInputError`` naming ``tracking.uri``, or ``StoreError`` for a database server that
    does not answer within ``retry_seconds``); a SQLite store is created and migrated under a
    cross-process lock and written in WAL mode (``store.use_wal``). The client retries a store
    that does not answer for at most ``retry_seconds`` a call
    (``store.Budgeted``), then raises ``StoreError``. Kept per process: a sweep's jobs would
    otherwise look the experiment up twice a run. A sweep's job passes the ``experiment_id`` the
    launching process opened: on a SQLite store written as rows, MLflow's client (whose schema
    check costs ~1 s) is then made only if a call needs it.
    """
    key = (uri, name)
    if key in _OPENED:
        client, known = _OPENED[key]
        if retry_seconds is not None:
            client.retry_seconds = float(retry_seconds)
        return client, known
    check_uri(uri)
    budget = DEFAULT_RETRY_SECONDS if retry_seconds is None else float(retry_seconds)
    configure_http(budget)
    rows = open_rows(uri) if experiment_id is not None else None
    if rows is None and experiment_id is None:
        experiment_id = _ready_experiment(uri, name, budget)
        rows = open_rows(uri) if experiment_id is not None else None
    if rows is not None:
        client = Budgeted(None, uri, budget, functools.partial(_mlflow_client, uri))
        client.rows = rows
        _OPENED[key] = (client, str(experiment_id))
        return _OPENED[key]
    client_class = _mlflow_client_class(uri)
    with store_lock(uri):  # the second process to come finds the tables made and migrated
        check_store(uri, budget)  # not a foreign file, nor another schema; a server in budget
        relocate(uri)  # a moved store's artifacts: beside it, not where it was made
        client = Budgeted(client_class(tracking_uri=uri), uri, budget)
        client.rows = open_rows(uri)  # made and migrated by MLflow by now
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            experiment_id = _create_experiment(client, uri, name)
        else:
            experiment_id = experiment.experiment_id
            # made before lincls set these, or by a lincls whose view differed: set them anew
            if not _described(experiment.tags):
                _describe_experiment(client, experiment_id)
    _OPENED[key] = (client, experiment_id)
    return client, experiment_id


def _mlflow_client_class(uri: str) -> Any:
    """MLflow's client class, with a SQLite store's engines set to open it in WAL mode."""
    from mlflow.tracking import MlflowClient

    use_wal(uri)
    return MlflowClient


def _mlflow_client(uri: str) -> Any:
    """An MLflow client of the store at ``uri``: made only when a call needs one (MLflow's import
    costs ~1 s a process, and a run on a SQLite store written as rows needs none)."""
    return _mlflow_client_class(uri)(tracking_uri=uri)


def _ready_experiment(uri: str, name: str, budget: float) -> str | None:
    """The id of experiment ``name`` of an existing SQLite store of this MLflow's schema when it
    is active and described as lincls describes it (read with SQL, without MLflow); None when
    MLflow's calls must make or describe it, or the store is not a SQLite file."""
    db = sqlite_path(uri)
    if db is None:
        return None
    # a new store is made with the experiment, described: read back below, MLflow never imported
    with store_lock(uri, experiment=_new_experiment(uri, name)):
        check_store(uri, budget)  # refuses a foreign file or another schema, as MLflow's path does
        relocate(uri)
    import sqlite3

    try:
        connection = read_only(db)
        try:
            found = connection.execute(
                "SELECT experiment_id, lifecycle_stage FROM experiments WHERE name = ?", (name,)
            ).fetchone()
            if found is None or found[1] != "active":
                return None
            tags = dict(
                connection.execute(
                    "SELECT key, value FROM experiment_tags WHERE experiment_id = ?", (found[0],)
                )
            )
        finally:
            connection.close()
    except sqlite3.Error:
        return None  # MLflow's calls will say what is wrong with it
    if not _described(tags):
        return None
    return str(found[0])


def _description() -> dict[str, str]:
    """The tags lincls describes its experiments with: their kind, their note and its view."""
    return {**EXPERIMENT_KIND, "mlflow.note.content": EXPERIMENT_NOTE, VIEW_TAG: view_state()}


def _new_experiment(uri: str, name: str) -> NewExperiment:
    """Experiment ``name`` of the store at ``uri`` as lincls creates and describes it; the
    template of a new store holding it is kept for lincls's own (``DEFAULT_EXPERIMENT``)."""
    return NewExperiment(name, artifact_root(uri), _description(), kept=name == DEFAULT_EXPERIMENT)


def _described(tags: Mapping[str, str]) -> bool:
    """Whether an experiment's tags are lincls's kind and its view as this lincls makes it."""
    return EXPERIMENT_KIND.items() <= tags.items() and tags.get(VIEW_TAG) == view_state()


def _create_experiment(client, uri: str, name: str) -> str:
    from mlflow.exceptions import MlflowException

    try:
        return client.create_experiment(
            name, artifact_location=artifact_root(uri), tags=_description()
        )
    except MlflowException:  # another process (on a server store) created it in between
        return client.get_experiment_by_name(name).experiment_id


def _describe_experiment(client, experiment_id: str) -> None:
    for key, value in _description().items():
        client.set_experiment_tag(experiment_id, key, value)


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A nested config as dotted names to strings (MLflow params); unset (None) values left out."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{name}."))
        elif value is not None:
            flat[name] = str(value)[:PARAM_VALUE_LIMIT]
    return flat


# Where each run this process created keeps its artifacts, until it is closed (``log_texts``).
_ARTIFACT_URIS: dict[str, str] = {}


def _rows(client) -> SqliteRuns | None:
    """The client's SQL writer of runs (``open_experiment`` gives one to a SQLite store's)."""
    return client.rows if isinstance(client, Budgeted) else None


def start_run(client, experiment_id: str, run_name: str | None, tags: Mapping[str, str]) -> str:
    """Create a RUNNING run and return its id: one run, though its request be retried."""
    rows = _rows(client)
    if rows is not None:  # one local transaction: a retried one never committed
        run_id, artifact_uri = client.call("create_run", rows.create, experiment_id, run_name, tags)
        _ARTIFACT_URIS[run_id] = artifact_uri
        return run_id
    if isinstance(client, Budgeted):
        run = create_run_once(client, experiment_id, run_name, tags)
    else:
        run = client.create_run(experiment_id, run_name=run_name, tags=dict(tags))
    _ARTIFACT_URIS[run.info.run_id] = run.info.artifact_uri
    return run.info.run_id


def _points(
    metrics: Mapping[str, float], curves: Mapping[str, Iterable[tuple[int, float]]]
) -> list[tuple[str, float, int, int]]:
    """(name, value, timestamp, step) of every finite metric (step 0) and every curve point."""
    now = int(time.time() * 1000)
    points = [(k, float(v), now, 0) for k, v in metrics.items() if math.isfinite(float(v))]
    for name, curve in curves.items():
        points.extend((name, float(v), now, int(step)) for step, v in curve)
    return points


def finish_run(
    client,
    run_id: str,
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    curves: Mapping[str, Iterable[tuple[int, float]]],
    tags: Mapping[str, str],
    dataset_input: Mapping[str, str] | None = None,
    status: str | None = "FINISHED",
) -> None:
    """Everything a run logs, then its close with ``status`` (None: leave it open).

    Through MLflow's client: one ``log_batch`` (MLflow splits it into its size limits), the
    dataset input, ``set_terminated``. On a SQLite store written as rows: one transaction, so a
    failure here never leaves a run half-written. ``dataset_input`` (``name``, ``digest``,
    ``source``, ``profile``) is logged as the run's MLflow dataset input, so the UI's Dataset
    column and the run page name the data.
    """
    rows = _rows(client)
    if rows is not None:
        points = _points(metrics, curves)
        client.call("log_batch", rows.finish, run_id, params, points, tags, dataset_input, status)
        if status is not None:
            _ARTIFACT_URIS.pop(run_id, None)
        return
    from mlflow.entities import Metric, Param, RunTag

    client.log_batch(
        run_id,
        metrics=[Metric(*point) for point in _points(metrics, curves)],
        params=[Param(k, v) for k, v in params.items()],
        tags=[RunTag(k, str(v)) for k, v in tags.items()],
    )
    if dataset_input:
        log_dataset_input(client, run_id, dataset_input)
    if status is not None:
        end_run(client, run_id, status)


def local_artifacts(uri: str) -> Path | None:
    """The directory of a run's artifacts at ``uri`` when it is on the local disk (a ``file://``
    URI, or a plain absolute path as a PostgreSQL store's experiments get by default), else None."""
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    parsed = urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(url2pathname(parsed.path))
    if not parsed.scheme and uri and Path(uri).is_absolute():
        return Path(uri)
    return None


def log_texts(client, run_id: str, texts: Mapping[str, str]) -> None:
    """A run's text artifacts, by file name (e.g. ``dataset/columns.json``).

    Artifacts on the local disk (a ``file://`` URI, or a plain path as a PostgreSQL store's
    experiments get by default) are written as plain files in the run's artifact directory, where
    MLflow's ``log_text`` puts them too; its call looks the run up through MLflow's ORM, writes a
    temporary file and copies it (~4 ms a file on SQLite, ~20 ms a run on PostgreSQL). Other
    stores get ``log_text``.
    """
    if not texts:
        return
    root = local_artifacts(_ARTIFACT_URIS.get(run_id) or "")
    if root is None:
        for name, text in texts.items():
            client.log_text(run_id, text, name)
        return
    for name, text in texts.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def log_dataset_input(client, run_id: str, dataset_input: Mapping[str, str]) -> None:
    """The run's training data as an MLflow dataset input (context ``train``)."""
    rows = _rows(client)
    if rows is not None:
        client.call("log_inputs", rows.finish, run_id, dataset_input=dataset_input, status=None)
        return
    from mlflow.exceptions import MlflowException

    inputs = [training_input(dataset_input)]
    try:
        client.log_inputs(run_id, datasets=inputs)
    except MlflowException:
        # Another run inserted the same dataset at the same moment: a store over PostgreSQL
        # looks the dataset up, then inserts it, and the second insert breaks its unique key.
        # It exists now, so a second call only links it to this run.
        client.log_inputs(run_id, datasets=inputs)


def end_run(client, run_id: str, status: str = "FINISHED") -> None:
    """Close a run with ``status`` (FINISHED, FAILED or KILLED)."""
    _ARTIFACT_URIS.pop(run_id, None)
    rows = _rows(client)
    if rows is not None:
        client.call("set_terminated", rows.finish, run_id, status=status)
        return
    client.set_terminated(run_id, status=status)


def fail_run(client, run_id: str, error: BaseException | str) -> None:
    """Close a run FAILED (KILLED on an interrupt), keeping the error in the tag ``error``."""
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    message = message.strip()[:PARAM_VALUE_LIMIT]
    status = "KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED"
    _ARTIFACT_URIS.pop(run_id, None)
    rows = _rows(client)
    if rows is not None:
        client.call("set_terminated", rows.finish, run_id, tags={"error": message}, status=status)
        return
    try:
        client.set_tag(run_id, "error", message)
    finally:
        client.set_terminated(run_id, status=status)


def stored_of(payload: Mapping[str, Any]) -> Written:
    """What the store gets of a payload of ``runner.execute_deferred``: a measured run's
    ``stored`` (its few metrics and tags, its record: ``lincls.tracking.record``), else (a
    failure) its tags as they are."""
    stored = payload.get("stored")
    if stored is not None:
        return stored
    return Written(dict(payload["metrics"]), dict(payload["tags"]), {})


def write_payload(client, experiment_id: str, payload: Mapping[str, Any]) -> str:
    """Write and close a run measured elsewhere (``runner.execute_deferred``), creating it unless
    the measuring process did (``run_id``; ``inputs_written``: its dataset input and artifacts)."""
    stored = stored_of(payload)
    run_id = payload.get("run_id")
    if run_id is None:
        run_id = start_run(client, experiment_id, payload["run_name"], stored.tags)
    written = bool(payload.get("inputs_written"))
    finished = payload["status"] == "FINISHED"
    note = stored.tags.get(NOTE_TAG)
    # its description opens with its figure (drawn from its record), whose link needs the run's id
    tags = {NOTE_TAG: with_figure(note, run_id)} if note else {}
    try:
        if not written:
            log_texts(client, run_id, stored.artifacts)
        finish_run(client, run_id, payload["params"], stored.metrics, {}, tags,
                   None if written else payload.get("dataset_input"),
                   "FINISHED" if finished else None)  # fmt: skip
    except StoreError:
        raise  # closing it would wait out the budget again; the next sweep closes it
    except BaseException:
        fail_run(client, run_id, str(payload.get("error") or "its write failed"))
        raise
    if not finished:
        fail_run(client, run_id, str(payload.get("error") or ""))
    return run_id
