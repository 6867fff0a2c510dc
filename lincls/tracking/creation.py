"""A new SQLite store, made whole or not at all: MLflow's tables in a file beside the store,
moved into place once made; copied from a template of this MLflow's empty store where one is
kept (MLflow makes a store by running every schema migration, 3-8 s on 2 cores).

A store is made with the experiment its first opener writes to (``NewExperiment``: its name,
artifact location and tags, as ``lincls.tracking`` describes it), so the opener reads it back with
SQL. For lincls's own experiment the template holds it too: a new store is then a copy and a few
SQL updates, and the command that made it never imports MLflow (~0.7 s, and ~0.6 s more to make
the experiment through it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lincls.errors import LinclsInputError, one_line

# MLflow's server passes its artifact root to the stores it makes in this variable
SERVER_ARTIFACT_ROOT_ENV = "_MLFLOW_SERVER_ARTIFACT_ROOT"


@dataclass(frozen=True)
class NewExperiment:
    """The experiment a new store is made with: its name, artifact location and tags."""

    name: str
    artifact_location: str | None
    tags: dict[str, str] = field(default_factory=dict)
    kept: bool = False  # whether the template of the store with it is kept (lincls's own)


def create(db: Any, experiment: NewExperiment | None = None) -> None:
    """Make a new SQLite store (MLflow's tables, migrated) in a file beside ``db``, with
    ``experiment`` in it, then move it in place; nothing if ``db`` has content. A store whose
    making fails (a full disk) leaves no file, where MLflow left a half-made one it could not
    open again: ``LinclsInputError``."""
    wal = db.with_name(db.name + "-wal")
    if db.exists() and (db.stat().st_size > 0 or (wal.exists() and wal.stat().st_size > 0)):
        return
    new = db.with_name(db.name + ".new")  # under the lock: a leftover is a dead process's
    made = [new, *(new.with_name(new.name + end) for end in ("-journal", "-wal", "-shm"))]
    for path in made:
        path.unlink(missing_ok=True)
    described = _template(experiment) if experiment is not None and experiment.kept else None
    if described is not None and described.is_file() and _copied(described, new, experiment):
        os.replace(new, db)
        return
    _make(db, new, made)
    if experiment is not None:
        _add_experiment(db, new, made, experiment)
        if described is not None:
            _keep_template(new, described)
    os.replace(new, db)


def _copied(template: Any, new: Any, experiment: NewExperiment | None) -> bool:
    """Whether ``new`` was made a copy of ``template`` (else nothing of it is left)."""
    try:
        _from_template(template, new, experiment)
    except (OSError, sqlite3.Error):
        for end in ("", "-journal", "-wal", "-shm"):
            new.with_name(new.name + end).unlink(missing_ok=True)
        return False
    return True


def _make(db: Any, new: Any, made: list) -> None:
    """MLflow's tables and Default experiment in ``new``: a copy of the template, or made by
    MLflow (every migration), then kept as the template."""
    template = _template()
    if template is not None and template.is_file() and _copied(template, new, None):
        return
    import logging

    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracking._tracking_service.utils import _get_sqlalchemy_store

    quiet = logging.getLogger("mlflow.store.db.utils")  # "Creating initial … tables" (2 lines)
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    try:
        store = _get_sqlalchemy_store(f"sqlite:///{new}", None)  # the tables, MLflow's Default
        if isinstance(store, SqlAlchemyStore):
            store.engine.dispose()
    except Exception as exc:
        raise _not_made(db, made, exc) from None
    finally:
        quiet.setLevel(level)
    if template is not None:
        _keep_template(new, template)


def _not_made(db: Any, made: list, exc: Exception) -> LinclsInputError:
    """The one line of a store whose making failed (a full disk), its files gone."""
    for path in made:
        path.unlink(missing_ok=True)
    reason = one_line(getattr(exc, "orig", None) or exc)
    return LinclsInputError(
        "tracking.uri", f"cannot create the store {db} ({reason}); nothing was written"
    )


def _add_experiment(db: Any, new: Any, made: list, experiment: NewExperiment) -> None:
    """``experiment`` created in the store at ``new`` by MLflow's own store, as its client would."""
    from mlflow.entities import ExperimentTag
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    try:
        store = SqlAlchemyStore(f"sqlite:///{new}", _default_root())
        try:
            store.create_experiment(
                experiment.name,
                artifact_location=experiment.artifact_location,
                tags=[ExperimentTag(k, v) for k, v in experiment.tags.items()],
            )
        finally:
            store.engine.dispose()
    except Exception as exc:
        raise _not_made(db, made, exc) from None


def _template(experiment: NewExperiment | None = None) -> Any:
    """Where this MLflow's new, empty store is kept to be copied (``create``): MLflow makes a store
    by running every schema migration since its first (3-8 s on 2 cores), and the result is the
    same file each time but for its Default experiment's place and time. In the user's cache,
    one file per MLflow version; None where MLflow would make another kind of store. With
    ``experiment``: the store holding it too, one file per MLflow version and description (its
    name and tags: a lincls that describes it otherwise keeps a template of its own)."""
    from importlib.metadata import version

    if os.environ.get("MLFLOW_ENABLE_WORKSPACES") or os.environ.get(SERVER_ARTIFACT_ROOT_ENV):
        return None
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lincls"
    if experiment is None:
        return cache / f"mlflow-{version('mlflow')}-store.db"
    described = json.dumps([experiment.name, experiment.tags], sort_keys=True)
    digest = hashlib.sha256(described.encode()).hexdigest()[:16]
    return cache / f"mlflow-{version('mlflow')}-store-{digest}.db"


def _default_root() -> str:
    """MLflow's default artifact root for a store it makes here (``./mlruns`` resolved against
    the working directory), without importing MLflow on POSIX: the path MLflow's
    ``resolve_uri_if_local`` gives there (tests/test_store_open.py compares the two)."""
    if os.name == "posix":
        return Path.cwd().joinpath("mlruns").as_posix()
    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.utils.uri import resolve_uri_if_local

    return resolve_uri_if_local(DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)


def _keep_template(made: Any, template: Any) -> None:
    """Copy a store MLflow just made to ``template``, whole or not at all; a cache that cannot be
    written is left alone."""
    import shutil

    try:
        template.parent.mkdir(parents=True, exist_ok=True)
        partial = template.with_name(f"{template.name}.{os.getpid()}.{uuid.uuid4().hex}")
        shutil.copyfile(made, partial)
        os.replace(partial, template)
    except OSError:
        pass


def _from_template(template: Any, new: Any, experiment: NewExperiment | None) -> None:
    """A new store at ``new`` copied from ``template``, its Default experiment (and
    ``experiment``, which the template holds) placed and timed as MLflow places and times them
    (tests/test_store_open.py compares the two makings)."""
    import shutil

    shutil.copyfile(template, new)
    location = f"{_default_root().rstrip('/')}/0"  # MLflow's append_to_uri_path(root, "0")
    now = int(time.time() * 1000)
    connection = sqlite3.connect(new)
    try:
        with connection:
            connection.execute(
                "UPDATE experiments SET artifact_location = ?, creation_time = ?, "
                "last_update_time = ? WHERE experiment_id = 0",
                (str(location), now, now),
            )
            if experiment is not None:
                updated = connection.execute(
                    "UPDATE experiments SET artifact_location = ?, creation_time = ?, "
                    "last_update_time = ? WHERE name = ?",
                    (experiment.artifact_location, now, now, experiment.name),
                ).rowcount
                if updated != 1:
                    raise sqlite3.DatabaseError(f"the template holds no {experiment.name!r}")
    finally:
        connection.close()
