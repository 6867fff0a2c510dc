"""MLflow runs written as rows of MLflow's PostgreSQL store, as ``tracking.sqlite_runs`` writes them
to SQLite: a run's creation in one transaction, its params, metrics, tags, dataset input and
close in one more, through psycopg instead of MLflow's ORM and client.

The SQL is ``sqlite_runs``' own, with PostgreSQL's forms where SQLite's differ: a transaction is
a plain ``BEGIN`` (PostgreSQL locks rows, not the file: writers of other runs never wait), a
metric point logged twice is kept once by ``ON CONFLICT DO NOTHING``, ``is_nan`` is a boolean,
and a dataset row two writers add at once is kept once. ``tests/test_postgres_runs.py`` writes
runs both ways and compares every table. ``open_rows`` gives the writer of a store: SQLite's,
PostgreSQL's, or None (another schema, a server, no psycopg: MLflow's calls).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from lincls.tracking.sqlite_runs import COLUMNS, READ_COLUMNS, SqliteRuns

SCHEMES = ("postgresql", "postgres")


def _libpq_uri(uri: str) -> str | None:
    """The libpq form of a PostgreSQL URI (SQLAlchemy's driver suffix dropped), else None."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme.partition("+")[0].lower() not in SCHEMES:
        return None
    return f"postgresql://{rest}"


class Connection:
    """A psycopg connection with the calls ``sqlite_runs`` makes of a ``sqlite3`` one (``?``
    placeholders, ``executemany``, ``in_transaction``)."""

    dialect = "postgresql"

    def __init__(self, connection: Any) -> None:
        self.raw = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(sql.replace("?", "%s"), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:  # psycopg sends them in one pipeline
            with self.raw.cursor() as cursor:
                cursor.executemany(sql.replace("?", "%s"), rows)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


def schema_matches(connection: Connection) -> bool:
    """Whether the store's tables have the columns ``sqlite_runs`` writes (and reads)."""
    found: dict[str, set[str]] = {}
    for table, column in connection.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema()"
    ):
        found.setdefault(table, set()).add(column)
    for table, columns in {**COLUMNS, **READ_COLUMNS}.items():
        if table in READ_COLUMNS and not columns <= found.get(table, set()):
            return False
        if table in COLUMNS and found.get(table) != columns:
            return False
    return True


class PostgresRuns(SqliteRuns):
    """Creates and writes runs of one MLflow PostgreSQL store (module docstring)."""

    BEGIN = "BEGIN"

    @classmethod
    def open(cls, uri: str, timeout: float = 5.0) -> PostgresRuns | None:
        """A writer of the PostgreSQL store at ``uri`` (made and migrated by MLflow already), or
        None: not PostgreSQL, no psycopg, or tables of another schema."""
        libpq = _libpq_uri(uri)
        if libpq is None:
            return None
        try:
            import psycopg
        except ImportError:
            return None
        writer = cls(libpq, timeout)
        try:
            matches = schema_matches(writer.connection())
        except psycopg.Error:
            matches = False
        if not matches:
            writer.close()
            return None
        return writer

    def connection(self) -> Connection:  # type: ignore[override]
        """This process's connection (a connection never crosses a fork)."""
        import psycopg

        pid = os.getpid()
        held = self._connections.get(pid)
        if held is not None and (held.raw.closed or held.raw.broken):
            del self._connections[pid]  # the server went away: a retried write connects again
        if pid not in self._connections:
            self._connections.clear()  # a parent's, inherited through fork: not ours to close
            raw = psycopg.connect(
                self.path, autocommit=True, connect_timeout=max(2, math.ceil(self.timeout))
            )
            self._connections[pid] = Connection(raw)  # type: ignore[assignment]
        return self._connections[pid]  # type: ignore[return-value]


def open_rows(uri: str, timeout: float = 5.0) -> SqliteRuns | None:
    """The SQL writer of runs of the store at ``uri``: SQLite's, PostgreSQL's, or None (MLflow's
    calls write its runs)."""
    if _libpq_uri(uri) is not None:
        return PostgresRuns.open(uri, timeout)
    return SqliteRuns.open(uri, timeout)
