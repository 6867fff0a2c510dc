"""The tracking store as many processes share it: checked, opened under a lock, given a budget.

- ``check_uri`` refuses a URI lincls cannot write to before anything is stored: an unknown
  scheme, a folder store, a directory, or a SQLite file in a folder that does not exist (but
  the default store's) or cannot be written (MLflow would otherwise retry for about two minutes
  and end in a long traceback that never names ``tracking.uri``).
- ``lincls.tracking.schema.check_store`` refuses a database that is not an MLflow store of this
  MLflow's schema, and reaches a database server within the retry budget.
- ``store_lock`` serialises the creation and migration of a SQLite or PostgreSQL store across
  processes: two processes that each find no tables and create them at once leave a SQLite file
  unusable, and break a PostgreSQL database's unique index of type names. Whoever takes the lock
  second opens it again and finds the tables there.
- ``Budgeted`` wraps an MLflow client so that a store that does not answer costs a run at most
  ``tracking.retry_seconds``: transient failures (a dead server, a locked database) are retried
  with back-off until then, and then raised as one ``StoreError`` line.
- ``use_wal`` puts a SQLite store that lincls opens in write-ahead-log mode with
  ``synchronous=NORMAL``: a commit no longer waits for the disk (each took ~10 ms in the default
  rollback journal), readers never block the writer, and the file survives a crash intact.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lincls.config.run import (  # the defaults live with the settings they are defaults of
    DEFAULT_MAX_STORE_FAILURES,  # noqa: F401
    DEFAULT_RETRY_SECONDS,
    check_tracking,
)
from lincls.errors import LinclsInputError, one_line
from lincls.paths import check_home, default_tracking_uri, sqlite_path
from lincls.tracking.creation import NewExperiment, create

# The schemes of MLflow's tracking stores (a database URI may name a driver: postgresql+psycopg).
SCHEMES = ("sqlite", "file", "http", "https", "postgresql", "mysql", "mssql", "databricks")
# MLflow errors that a second try may not see (its other codes are the request's own fault).
TRANSIENT_CODES = {"TEMPORARILY_UNAVAILABLE", "INTERNAL_ERROR", "REQUEST_LIMIT_EXCEEDED"}


class StoreError(RuntimeError):
    """The store did not answer within the retry budget; the message is one line."""


def check_scheme(uri: str, field: str = "tracking.uri") -> None:
    """Raise ``LinclsInputError`` (naming ``field``) for a URI of no store MLflow writes: an
    unknown scheme, a relative SQLite URI, or a folder store (``file://``, which MLflow refuses
    unless ``MLFLOW_ALLOW_FILE_STORE`` is true)."""
    scheme = uri.partition(":")[0].partition("+")[0].lower() if ":" in uri else ""
    if os.path.isabs(uri) and scheme == "":
        scheme = "file"
    allowed_files = os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in ("true", "1")
    if scheme not in SCHEMES:
        offered = [f"{s}://" for s in SCHEMES if s != "file" or allowed_files]
        raise LinclsInputError(
            field, f"must be a path ending in .db or start with one of {', '.join(offered)}; "
            f"got {uri!r}")  # fmt: skip
    if scheme == "sqlite" and not uri.startswith("sqlite:///"):
        raise LinclsInputError(field, f"a SQLite store is sqlite:///<file>; got {uri!r}")
    if scheme == "file" and not allowed_files:
        raise LinclsInputError(
            field, f"MLflow writes no folder store ({uri!r}); give a SQLite file: a path ending "
            "in .db, or sqlite:///<path>.db")  # fmt: skip


def check_uri(uri: str) -> None:
    """Raise ``LinclsInputError`` (field ``tracking.uri``) for a store lincls cannot write.

    A SQLite store's folder must exist, except the default store's (``$LINCLS_HOME``, which is
    lincls's to make): a folder the user named and mistyped is never made."""
    check_scheme(uri)
    db = sqlite_path(uri)
    if db is None:
        return
    if db.is_dir():
        raise LinclsInputError("tracking.uri", f"{db} is a directory, not a SQLite file")
    if uri == default_tracking_uri():
        check_home()
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LinclsInputError(
                "tracking.uri", f"cannot create the store's directory {db.parent} ({exc.strerror})"
            ) from None
    elif not db.parent.is_dir():
        problem = "is not a folder" if db.parent.exists() else "does not exist"
        raise LinclsInputError(
            "tracking.uri", f"the store's folder {db.parent} {problem}; make it first, or give "
            "a .db file in a folder that exists")  # fmt: skip
    if not os.access(db.parent, os.W_OK) or (db.exists() and not os.access(db, os.W_OK)):
        raise LinclsInputError(
            "tracking.uri", f"the store {db} is in a directory this user cannot write"
        )


def check_store_file(uri: str, field: str) -> None:
    """Raise ``LinclsInputError`` (naming ``field``) unless ``uri`` is of a store's scheme
    (``check_scheme``) and, a SQLite ``uri``, names an MLflow store: a file that exists, is a
    SQLite database and has MLflow's tables. What reads a store must never make one
    (SQLAlchemy would make an empty file, then fail on its tables).

    The file is read through SQLite alone, read-write (which never makes a file): a read-only
    connection to a store in WAL mode can fail, and opening and closing the file any other way
    drops the locks the process's SQLite connections hold on it. Only a file SQLite calls no
    database (or a damaged one) is refused."""
    from urllib.parse import quote

    check_scheme(uri, field)
    db = sqlite_path(uri)
    if db is None:
        return
    if not db.is_file():
        raise LinclsInputError(field, f"no MLflow store at {uri} (run a sweep first)")
    connection = sqlite3.connect(f"file:{quote(str(db.resolve()))}?mode=rw", uri=True)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        name = getattr(exc, "sqlite_errorname", "")
        if name == "SQLITE_NOTADB":
            problem = f"{db} is not a SQLite database, so not an MLflow store"
            raise LinclsInputError(field, problem) from None
        if name == "SQLITE_CORRUPT":
            raise LinclsInputError(field, f"{db} is a damaged SQLite database ({exc})") from None
        return  # not the file's fault (a lock, I/O): the store's reader meets it, or not
    finally:
        connection.close()
    if not {"experiments", "runs", "tags"} <= tables:
        listed = ", ".join(sorted(tables)) or "none"
        raise LinclsInputError(field, f"{db} is not an MLflow store (its tables: {listed})")
    from lincls.tracking.relocate import relocate

    try:  # a moved store's artifacts: beside it, not where it was made
        relocate(uri)
    except sqlite3.Error:
        pass  # a store this process may not write (read-only): read where it points


@contextlib.contextmanager
def store_lock(
    uri: str, timeout: float = 300.0, experiment: NewExperiment | None = None
) -> Iterator[None]:
    """Hold a cross-process lock on a SQLite store (``<file>.lock``) or a PostgreSQL one (an
    advisory lock: ``postgres_runs.schema_lock``); other stores need none. A SQLite store that
    does not exist yet is made under it, whole or not at all, with ``experiment`` (``create``)."""
    db = sqlite_path(uri)
    if db is None:
        from lincls.tracking.postgres_runs import schema_lock

        with schema_lock(uri, timeout):
            yield
        return
    from filelock import FileLock

    with FileLock(str(db) + ".lock", timeout=timeout):
        create(db, experiment)
        yield


_WAL_FILES: set[str] = set()


def use_wal(uri: str) -> None:
    """Open the SQLite store at ``uri`` (none other) in WAL mode, ``synchronous=NORMAL``, from now
    on in this process: every new connection of any engine to that file runs the two pragmas."""
    db = sqlite_path(uri)
    if db is None:
        return
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    _WAL_FILES.add(str(db.resolve()))
    if not event.contains(Engine, "connect", _wal_on_connect):
        event.listen(Engine, "connect", _wal_on_connect)


def _wal_on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    import sqlite3

    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    cursor = dbapi_connection.cursor()
    try:
        files = {row[2] for row in cursor.execute("PRAGMA database_list")}
        if files & _WAL_FILES:
            cursor.execute("PRAGMA journal_mode=WAL")  # kept in the file: a no-op once set
            cursor.execute("PRAGMA synchronous=NORMAL")  # per connection
    except sqlite3.OperationalError:
        pass  # another process holds it in the old mode: this connection keeps the default
    finally:
        cursor.close()


def check_settings(settings: Mapping[str, Any]) -> None:
    """Check the ``tracking`` keys that bound a store's failures (``LinclsInputError``); a
    ``RunConfig`` has them checked already (``lincls.config.run.check_tracking``)."""
    check_tracking(settings)


TIMEOUT_ENV = "MLFLOW_HTTP_REQUEST_TIMEOUT"


def configure_http(retry_seconds: float) -> None:
    """MLflow's own HTTP retries off (``Budgeted`` retries instead). The request timeout is
    ``Budgeted``'s (the budget's remaining seconds), unless the environment sets one."""
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a store failure that may pass (not a mistake in the request)."""
    exceptions = sys.modules.get("mlflow.exceptions")  # not imported: no MLflow error to judge
    if exceptions is not None and isinstance(exc, exceptions.MlflowException):
        return exc.error_code in TRANSIENT_CODES or str(exc.message).startswith("API request")
    names = {kind.__name__ for kind in type(exc).__mro__}  # psycopg's AdminShutdown, …
    return isinstance(exc, OSError) or bool(names & {"OperationalError", "Timeout"})


class Budgeted:
    """An MLflow client whose calls retry transient failures for at most ``retry_seconds``."""

    def __init__(
        self,
        client: Any,
        uri: str,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
        make: Callable[[], Any] | None = None,
    ):
        self._client = client  # None: ``make`` makes it on first use
        self._make = make
        self.uri = uri
        self.retry_seconds = float(retry_seconds)
        self.rows: Any = None  # a SQLite store's writer of runs as rows (``tracking.sqlite_runs``)

    @property
    def client(self) -> Any:
        """The MLflow client (made on first use when it was given as ``make``)."""
        if self._client is None and self._make is not None:
            self._client = self._make()
        return self._client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self.call(name, attribute, *args, **kwargs)

    def call(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)``, retried with back-off while the budget lasts.

        On a tracking server a request may take the whole budget that is left: a slow but live
        server is waited for up to ``retry_seconds`` (a fixed share of it, a third, refused a
        server that took 3 s at ``retry_seconds=6``), while a dead one refuses at once and is
        tried again after a back-off. No attempt ends past the budget (a timeout is whole seconds,
        rounded down). A timeout set in the environment (``MLFLOW_HTTP_REQUEST_TIMEOUT``) is kept,
        and no attempt starts that it could carry past the budget.
        """
        start, delay = time.monotonic(), 0.25
        remote = self.uri.startswith(("http://", "https://"))
        given = os.environ.get(TIMEOUT_ENV) if remote else None
        fixed = float(given) if given else 0.0
        last_start = self.retry_seconds - (fixed if given else MIN_REQUEST_SECONDS)
        while True:
            try:
                if not remote or given:
                    return method(*args, **kwargs)
                left = self.retry_seconds - (time.monotonic() - start)
                with _request_timeout(max(MIN_REQUEST_SECONDS, left)):
                    return method(*args, **kwargs)
            except Exception as exc:
                if not transient(exc):
                    raise
                waited = time.monotonic() - start
                if waited + delay > max(0.0, last_start):
                    raise StoreError(
                        f"tracking.uri: the store {self.uri} did not answer {name} for "
                        f"{waited:.0f} s: {one_line(exc)}"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 4.0)


MIN_REQUEST_SECONDS = 1  # MLflow reads the timeout as whole seconds


@contextlib.contextmanager
def _request_timeout(seconds: float) -> Iterator[None]:
    """MLflow's HTTP request timeout set to ``seconds`` (whole, at least 1) for the calls within."""
    os.environ[TIMEOUT_ENV] = str(max(MIN_REQUEST_SECONDS, int(seconds)))
    try:
        yield
    finally:
        os.environ.pop(TIMEOUT_ENV, None)


# A tag that marks one creation of a run, the same on every retried request of it.
CREATION_TAG = "lincls.creation"


def create_run_once(
    client: Budgeted, experiment_id: str, run_name: str | None, tags: Mapping[str, str]
) -> Any:
    """``create_run`` through MLflow's client (a ``Budgeted`` one), retried without making a
    second run.

    MLflow's REST API takes no run id from the client, and a request whose answer was lost (a
    server paused past the request's timeout) may still be carried out after it. So every request
    of one creation carries the same ``CREATION_TAG``, and a retry first looks for a run with it:
    one found is the run. After a retried creation, a second run with the tag (made by a request
    answered late) is deleted; one made later still is a RUNNING run its sweep deletes at the end
    (``sweeps.finish_sweep``).
    """
    marker = uuid.uuid4().hex
    tags = {**tags, CREATION_TAG: marker}
    raw = client.client
    requests: list[None] = []

    def create() -> Any:
        if requests:
            found = _created(raw, experiment_id, marker)
            if found:
                return found[0]
        requests.append(None)
        return raw.create_run(experiment_id, run_name=run_name, tags=tags)

    run = client.call("create_run", create)
    if len(requests) > 1:
        try:
            for other in client.call("search_runs", _created, raw, experiment_id, marker):
                if other.info.run_id != run.info.run_id:
                    client.call("delete_run", raw.delete_run, other.info.run_id)
        except StoreError:
            pass  # left RUNNING: the sweep deletes it at its end
    return run


def _created(raw, experiment_id: str, marker: str) -> list:
    """The runs one creation (``marker``) made, first made first."""
    return raw.search_runs(
        [experiment_id],
        filter_string=f"tags.`{CREATION_TAG}` = '{marker}'",
        order_by=["attributes.start_time ASC"],
    )
