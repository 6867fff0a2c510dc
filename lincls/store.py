"""The tracking store as many processes share it: checked, opened under a lock, given a budget.

- ``check_uri`` refuses a URI lincls cannot write to before anything is stored: an unknown
  scheme, or a SQLite file in a directory that cannot be written (MLflow would otherwise retry
  for about a minute and end in a long traceback that never names ``tracking.uri``).
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
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lincls.errors import LinclsInputError, check_number
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


@contextlib.contextmanager
def store_lock(uri: str, timeout: float = 300.0) -> Iterator[None]:
    """Hold a cross-process lock on a SQLite store (``<file>.lock``); other stores need none."""
    db = sqlite_path(uri)
    if db is None:
        yield
        return
    from filelock import FileLock

    with FileLock(str(db) + ".lock", timeout=timeout):
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
