"""Which databases lincls lets MLflow open as its store: checked before MLflow touches them.

MLflow opens any SQLite file and any database as its store: a file holding other tables gets
MLflow's tables added to it; a store of another schema revision ends in a 38-line traceback; an
unreachable database server is retried by MLflow's engine for about two minutes, then a traceback
of some 190 lines. ``check_store`` refuses the first two in one line (``LinclsInputError`` naming
``tracking.uri``), leaving the file as it was, and reaches a server within the retry budget
(``StoreError`` past it).
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

from lincls.errors import LinclsInputError
from lincls.paths import sqlite_path
from lincls.tracking.store import DEFAULT_RETRY_SECONDS, StoreError, one_line

# A SQLite database is at least one page, and a page at least 512 bytes.
MIN_SQLITE_BYTES = 512
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
        size = db.stat().st_size if db.is_file() else 0
        if size == 0:
            return  # a new store (check_uri refused a directory)
        if size < MIN_SQLITE_BYTES:  # SQLite reads a 1-byte file as an empty database
            raise _not_sqlite(db)
        _judge(uri, str(db), *_sqlite_contents(db))
        return
    scheme = uri.partition(":")[0].partition("+")[0].lower()
    if scheme in SERVER_SCHEMES:
        _judge(uri, _shown(uri), *_reach_database(uri, scheme, float(retry_seconds)))


def read_only(db: Any) -> Any:
    """A read-only ``sqlite3`` connection to the SQLite file ``db`` (never creates or writes it)."""
    import sqlite3
    from urllib.parse import quote

    return sqlite3.connect(f"file:{quote(str(db.resolve()))}?mode=ro", uri=True)


def _not_sqlite(db: Any) -> LinclsInputError:
    return LinclsInputError(
        "tracking.uri",
        f"{db} is not a SQLite database; refused (lincls writes an MLflow store or a new file): "
        "give another file",
    )


def _sqlite_contents(db: Any) -> tuple[set[str], str | None]:
    """(table names, alembic revision) of a SQLite file, read through a read-only connection.

    Only through SQLite: opening and closing the file any other way (reading its header) drops
    every POSIX lock this process's SQLite connections hold on it, and another process, seeing
    no reader left, then checkpoints and deletes the WAL those connections still map ("database
    disk image is malformed" in this process from then on)."""
    import sqlite3

    try:
        connection = read_only(db)
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
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_NOTADB":
            raise _not_sqlite(db) from None
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


def _migrations() -> dict[str, tuple[str, ...]]:
    """MLflow's schema revisions and each one's parents, read from its migration files.

    Alembic reads the same two assignments (``revision``, ``down_revision``) by importing every
    file through its script directory, ~0.7 s a process; reading them as text costs
    milliseconds and imports nothing of MLflow's (``tests/test_store_open.py`` holds the two
    readings equal)."""
    import ast
    import importlib.util
    import re
    from pathlib import Path

    spec = importlib.util.find_spec("mlflow")
    if spec is None or not spec.submodule_search_locations:
        return {}
    versions = Path(next(iter(spec.submodule_search_locations))) / "store/db_migrations/versions"
    graph: dict[str, tuple[str, ...]] = {}
    assignment = re.compile(r"^(revision|down_revision)\s*(?::[^=]*)?=\s*(.+)$", re.MULTILINE)
    for path in versions.glob("*.py"):
        found = {
            name: ast.literal_eval(value.strip())
            for name, value in assignment.findall(path.read_text(encoding="utf-8"))
        }
        if isinstance(found.get("revision"), str):
            parents = found.get("down_revision") or ()
            graph[found["revision"]] = (parents,) if isinstance(parents, str) else tuple(parents)
    return graph


@functools.cache
def schema_head() -> str:
    """The MLflow schema revision this MLflow writes: its migrations' one head (the revision no
    other names as its parent)."""
    graph = _migrations()
    parents = {parent for named in graph.values() for parent in named}
    heads = [revision for revision in graph if revision not in parents]
    if len(heads) != 1:  # an unexpected layout: alembic's own reading
        from mlflow.store.db.utils import _get_latest_schema_revision

        return _get_latest_schema_revision()
    return heads[0]


def _known_revision(revision: str) -> bool:
    return revision in _migrations()


def _judge(uri: str, where: str, tables: set[str], revision: str | None) -> None:
    """Refuse a database holding something other than an MLflow store of this MLflow's schema
    (no table at all: a new store, made by MLflow)."""
    from importlib.metadata import version

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
        f"{version('mlflow')} needs {head}: {advice}",
    )
