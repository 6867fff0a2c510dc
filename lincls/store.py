"""The tracking store as many processes share it: checked, opened under a lock, given a budget.

- ``check_uri`` refuses a URI lincls cannot write to before anything is stored: an unknown
  scheme, a directory, or a SQLite file in a directory that cannot be written (MLflow would
  otherwise retry for about two minutes and end in a long traceback that never names
  ``tracking.uri``).
- ``check_store`` refuses a database that is not an MLflow store of this MLflow's schema (a
  user's own SQLite file is never written: MLflow would add its tables to it), and reaches a
  database server within the retry budget (MLflow's own engine retries for about two minutes).
- ``store_lock`` serialises the creation and migration of a SQLite store across processes:
  two processes that each find no database and create its tables at once leave it unusable.
  Whoever takes the lock second opens it again and finds the tables there.
- ``Budgeted`` wraps an MLflow client so that a store that does not answer costs a run at most
  ``tracking.retry_seconds``: transient failures (a dead server, a locked database) are retried
  with back-off until then, and then raised as one ``StoreError`` line.
- ``use_wal`` puts a SQLite store that lincls opens in write-ahead-log mode with
  ``synchronous=NORMAL``: a commit no longer waits for the disk (each took ~10 ms in the default
  rollback journal), readers never block the writer, and the file survives a crash intact.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lincls.errors import LinclsInputError, check_name, check_number
from lincls.paths import sqlite_path

# The schemes of MLflow's tracking stores (a database URI may name a driver: postgresql+psycopg).
SCHEMES = ("sqlite", "file", "http", "https", "postgresql", "mysql", "mssql", "databricks")
DEFAULT_RETRY_SECONDS = 30.0
DEFAULT_MAX_STORE_FAILURES = 3
# MLflow errors that a second try may not see (its other codes are the request's own fault).
TRANSIENT_CODES = {"TEMPORARILY_UNAVAILABLE", "INTERNAL_ERROR", "REQUEST_LIMIT_EXCEEDED"}


class StoreError(RuntimeError):
    """The store did not answer within the retry budget; the message is one line."""


def check_uri(uri: str) -> None:
    """Raise ``LinclsInputError`` (field ``tracking.uri``) for a store lincls cannot write."""
    scheme = uri.partition(":")[0].partition("+")[0].lower() if ":" in uri else ""
    if os.path.isabs(uri) and scheme == "":
        scheme = "file"
    if scheme not in SCHEMES:
        allowed = ", ".join(f"{s}://" for s in SCHEMES)
        raise LinclsInputError("tracking.uri", f"must start with one of {allowed}; got {uri!r}")
    if scheme == "sqlite" and not uri.startswith("sqlite:///"):
        raise LinclsInputError("tracking.uri", f"a SQLite store is sqlite:///<file>; got {uri!r}")
    db = sqlite_path(uri)
    if db is None:
        return
    if db.is_dir():
        raise LinclsInputError("tracking.uri", f"{db} is a directory, not a SQLite file")
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LinclsInputError(
            "tracking.uri", f"cannot create the store's directory {db.parent} ({exc.strerror})"
        ) from None
    if not os.access(db.parent, os.W_OK) or (db.exists() and not os.access(db, os.W_OK)):
        raise LinclsInputError(
            "tracking.uri", f"the store {db} is in a directory this user cannot write"
        )


SQLITE_HEADER = b"SQLite format 3\x00"
# Database servers MLflow keeps its store in (a SQLite file is checked without a server).
SERVER_SCHEMES = ("postgresql", "mysql", "mssql")
# Per driver family: how a connection attempt is given a time limit (in whole seconds).
CONNECT_TIMEOUT = {"postgresql": "connect_timeout", "mysql": "connect_timeout"}


def check_store(uri: str, retry_seconds: float = DEFAULT_RETRY_SECONDS) -> None:
    """Refuse a database MLflow must not open as its store, before MLflow opens it.

    A SQLite file that is neither empty nor an MLflow store, or a store of another MLflow schema
    revision, is refused (``LinclsInputError`` naming ``tracking.uri``) and left as it was: MLflow
    would add its tables to a foreign file, and ends in a traceback on another revision. A
    database server is reached within ``retry_seconds`` (then ``StoreError``, one line). A SQLite
    store is checked under ``store_lock``: a store another process is creating is half-made.
    """
    db = sqlite_path(uri)
    if db is not None:
        if not db.is_file() or db.stat().st_size == 0:
            return  # a new store (check_uri refused a directory)
        with open(db, "rb") as handle:
            if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                raise LinclsInputError(
                    "tracking.uri",
                    f"{db} is not a SQLite database; refused (lincls writes an MLflow store or "
                    "a new file): give another file",
                )
        _judge(uri, str(db), *_sqlite_contents(db))
        return
    scheme = uri.partition(":")[0].partition("+")[0].lower()
    if scheme in SERVER_SCHEMES:
        _judge(uri, _shown(uri), *_reach_database(uri, scheme, float(retry_seconds)))


def _sqlite_contents(db: Any) -> tuple[set[str], str | None]:
    """(table names, alembic revision) of a SQLite file, read through a read-only connection."""
    import sqlite3
    from urllib.parse import quote

    try:
        connection = sqlite3.connect(f"file:{quote(str(db.resolve()))}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}  # fmt: skip
            revision = None
            if "alembic_version" in tables:
                row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
                revision = None if row is None else str(row[0])
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise LinclsInputError(
            "tracking.uri", f"{db} cannot be read as a SQLite database ({exc}); refused"
        ) from None
    return tables, revision


def _shown(uri: str) -> str:
    """A database URI as it may be printed: its password hidden."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(uri).render_as_string(hide_password=True)
    except Exception:
        return uri.split("@")[-1]


def _reach_database(uri: str, scheme: str, budget: float) -> tuple[set[str], str | None]:
    """(table names, alembic revision) of a database server's database, tried with back-off
    for at most ``budget`` seconds; then ``StoreError``."""
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    start, delay = time.monotonic(), 0.25
    while True:
        remaining = budget - (time.monotonic() - start)
        args = {}
        if scheme in CONNECT_TIMEOUT:  # libpq takes at least 2 s
            args[CONNECT_TIMEOUT[scheme]] = max(2, math.ceil(remaining))
        try:
            engine = sqlalchemy.create_engine(uri, poolclass=NullPool, connect_args=args)
        except ImportError as exc:
            raise LinclsInputError(
                "tracking.uri", f"the driver for {scheme} is not installed ({one_line(exc)})"
            ) from None
        except sqlalchemy.exc.ArgumentError as exc:
            raise LinclsInputError("tracking.uri", f"not a database URI: {one_line(exc)}") from None
        try:
            with engine.connect() as connection:
                tables = set(sqlalchemy.inspect(connection).get_table_names())
                revision = None
                if "alembic_version" in tables:
                    revision = connection.execute(
                        sqlalchemy.text("SELECT version_num FROM alembic_version")
                    ).scalar()
                return tables, None if revision is None else str(revision)
        except sqlalchemy.exc.DBAPIError as exc:
            waited = time.monotonic() - start
            if waited + delay >= budget:
                raise StoreError(
                    f"tracking.uri: the database {_shown(uri)} did not answer for "
                    f"{waited:.0f} s: {one_line(exc.orig or exc)}"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 4.0)
        finally:
            engine.dispose()


def schema_head() -> str:
    """The MLflow schema revision this MLflow writes (its migrations' head)."""
    from mlflow.store.db.utils import _get_latest_schema_revision

    return _get_latest_schema_revision()


def _known_revision(revision: str) -> bool:
    from alembic.script import ScriptDirectory
    from mlflow.store.db.utils import _get_alembic_config

    try:
        return (
            ScriptDirectory.from_config(_get_alembic_config("")).get_revision(revision) is not None
        )
    except Exception:  # alembic: "No such revision or branch"
        return False


def _judge(uri: str, where: str, tables: set[str], revision: str | None) -> None:
    """Refuse a database holding something other than an MLflow store of this MLflow's schema
    (no table at all: a new store, made by MLflow)."""
    import mlflow

    if not tables:
        return
    if not {"alembic_version", "experiments"} <= tables:
        names = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise LinclsInputError(
            "tracking.uri",
            f"{where} is not an MLflow store (its tables: {names}); refused, so as not to write "
            "into it: give a new file or an MLflow store",
        )
    head = schema_head()
    if revision == head:
        return
    if revision is not None and _known_revision(revision):
        advice = f"back it up, then run `mlflow db upgrade {_shown(uri)}`"
        kind = "an older"
    else:
        advice = "it was made by another (likely newer) MLflow: use that version, or a new store"
        kind = "an unknown"
    raise LinclsInputError(
        "tracking.uri",
        f"the store {where} has {kind} MLflow schema revision {revision} and MLflow "
        f"{mlflow.__version__} needs {head}: {advice}",
    )


@contextlib.contextmanager
def store_lock(uri: str, timeout: float = 300.0) -> Iterator[None]:
    """Hold a cross-process lock on a SQLite store (``<file>.lock``); other stores need none.
    A SQLite store that does not exist yet is made under it, whole or not at all (``create``)."""
    db = sqlite_path(uri)
    if db is None:
        yield
        return
    from filelock import FileLock

    with FileLock(str(db) + ".lock", timeout=timeout):
        create(db)
        yield


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
    os.replace(new, db)


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
    """Check the ``tracking`` keys that bound a store's failures (``LinclsInputError``)."""
    check_number(
        "tracking.retry_seconds",
        settings.get("retry_seconds", DEFAULT_RETRY_SECONDS),
        low=0,
        high=3600,
    )
    check_number(
        "tracking.max_store_failures",
        settings.get("max_store_failures", DEFAULT_MAX_STORE_FAILURES),
        low=1,
        integer=True,
    )
    if settings.get("experiment") is not None:  # "" would log to the default experiment
        check_name("tracking.experiment", settings["experiment"])


def configure_http(retry_seconds: float) -> None:
    """MLflow's own HTTP retries off (``Budgeted`` retries instead) and a request timeout of a
    third of the budget, unless the environment already sets them."""
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(max(1, int(retry_seconds // 3))))


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a store failure that may pass (not a mistake in the request)."""
    from mlflow.exceptions import MlflowException

    if isinstance(exc, MlflowException):
        return exc.error_code in TRANSIENT_CODES or str(exc.message).startswith("API request")
    return isinstance(exc, OSError) or type(exc).__name__ in {"OperationalError", "Timeout"}


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message as one line (the first line, cut to ``limit`` characters)."""
    text = str(getattr(exc, "message", None) or exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


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
        self.rows: Any = None  # a SQLite store's writer of runs as rows (``lincls.sqlite_runs``)

    @property
    def client(self) -> Any:
        """The MLflow client (made on first use when it was given as ``make``)."""
        if self._client is None and self._make is not None:
            self._client = self._make()
        return self._client

    @property
    def _last_start(self) -> float:
        # start no attempt that could end after the budget (a hung server costs one timeout)
        remote = self.uri.startswith(("http://", "https://"))
        timeout = float(os.environ.get("MLFLOW_HTTP_REQUEST_TIMEOUT", 0) or 0) if remote else 0
        return max(0.0, self.retry_seconds - timeout) if timeout else self.retry_seconds

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self.call(name, attribute, *args, **kwargs)

    def call(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)``, retried with back-off while the budget lasts."""
        start, delay = time.monotonic(), 0.25
        while True:
            try:
                return method(*args, **kwargs)
            except Exception as exc:
                if not transient(exc):
                    raise
                waited = time.monotonic() - start
                if waited + delay > self._last_start:
                    raise StoreError(
                        f"tracking.uri: the store {self.uri} did not answer {name} for "
                        f"{waited:.0f} s: {one_line(exc)}"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 4.0)
