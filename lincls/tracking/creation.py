"""A new SQLite store, made whole or not at all: MLflow's tables in a file beside the store,
moved into place once made; copied from a template of this MLflow's empty store where one is
kept (MLflow makes a store by running every schema migration, 3-8 s on 2 cores)."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from typing import Any

from lincls.errors import LinclsInputError, one_line

# MLflow's server passes its artifact root to the stores it makes in this variable
SERVER_ARTIFACT_ROOT_ENV = "_MLFLOW_SERVER_ARTIFACT_ROOT"


def create(db: Any) -> None:
    """Make a new SQLite store (MLflow's tables, migrated) in a file beside ``db``, then move it
    in place; nothing if ``db`` has content. A store whose making fails (a full disk) leaves no
    file, where MLflow left a half-made one it could not open again: ``LinclsInputError``."""
    wal = db.with_name(db.name + "-wal")
    if db.exists() and (db.stat().st_size > 0 or (wal.exists() and wal.stat().st_size > 0)):
        return
    import logging

    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracking._tracking_service.utils import _get_sqlalchemy_store

    new = db.with_name(db.name + ".new")  # under the lock: a leftover is a dead process's
    made = [new, *(new.with_name(new.name + end) for end in ("-journal", "-wal", "-shm"))]
    for path in made:
        path.unlink(missing_ok=True)
    template = _template()
    if template is not None and template.is_file():
        try:
            _from_template(template, new)
        except (OSError, sqlite3.Error):
            for path in made:
                path.unlink(missing_ok=True)
        else:
            os.replace(new, db)
            return
    quiet = logging.getLogger("mlflow.store.db.utils")  # "Creating initial … tables" (2 lines)
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    try:
        store = _get_sqlalchemy_store(f"sqlite:///{new}", None)  # the tables, MLflow's Default
        if isinstance(store, SqlAlchemyStore):
            store.engine.dispose()
    except Exception as exc:
        for path in made:
            path.unlink(missing_ok=True)
        reason = one_line(getattr(exc, "orig", None) or exc)
        raise LinclsInputError(
            "tracking.uri", f"cannot create the store {db} ({reason}); nothing was written"
        ) from None
    finally:
        quiet.setLevel(level)
    if template is not None:
        _keep_template(new, template)
    os.replace(new, db)


def _template() -> Any:
    """Where this MLflow's new, empty store is kept to be copied (``create``): MLflow makes a store
    by running every schema migration since its first (3-8 s on 2 cores), and the result is the
    same file each time but for its Default experiment's place and time. In the user's cache,
    one file per MLflow version; None where MLflow would make another kind of store."""
    from importlib.metadata import version
    from pathlib import Path

    if os.environ.get("MLFLOW_ENABLE_WORKSPACES") or os.environ.get(SERVER_ARTIFACT_ROOT_ENV):
        return None
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lincls"
    return cache / f"mlflow-{version('mlflow')}-store.db"


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


def _from_template(template: Any, new: Any) -> None:
    """A new store at ``new`` copied from ``template``, its Default experiment placed and timed as
    MLflow places and times it (tests/test_store_open.py compares the two makings)."""
    import shutil

    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.utils.uri import append_to_uri_path, resolve_uri_if_local

    shutil.copyfile(template, new)
    location = append_to_uri_path(resolve_uri_if_local(DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH), "0")
    now = int(time.time() * 1000)
    connection = sqlite3.connect(new)
    try:
        with connection:
            connection.execute(
                "UPDATE experiments SET artifact_location = ?, creation_time = ?, "
                "last_update_time = ? WHERE experiment_id = 0",
                (str(location), now, now),
            )
    finally:
        connection.close()
