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

import contextlib
import math
import os
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

from lincls.tracking.indexes import add_indexes
from lincls.tracking.sqlite_runs import COLUMNS, READ_COLUMNS, SqliteRuns

SCHEMES = ("postgresql", "postgres")
# The INSERTs ``sqlite_runs`` writes: head with table and columns, one row of placeholders, tail.
_INSERT = re.compile(r"(INSERT INTO (\w+) \(([^)]*)\)) VALUES \((?:\?, )*\?\)(.*)", re.DOTALL)


# PostgreSQL's advisory locks are named by a 64-bit number: lincls's lock on making MLflow's tables
SCHEMA_LOCK = 0x6C696E636C730001


@contextlib.contextmanager
def schema_lock(uri: str, timeout: float) -> Iterator[None]:
    """Hold a PostgreSQL store's advisory lock ``SCHEMA_LOCK`` (a session lock, on a connection of
    its own) while MLflow makes or migrates its tables there; nothing for another store.

    Sweeps started at once on a new database each had MLflow create the tables, and all but one
    broke PostgreSQL's unique index of type names (``pg_type_typname_nsp_index``); under the lock
    the later ones find the tables made. A server that does not answer, or no psycopg: no lock
    (the store's own check then says what is wrong). A lock not had within ``timeout`` seconds
    (another process holds it that long): the work goes on without it.
    """
    libpq = _libpq_uri(uri)
    connection = None
    if libpq is not None:
        try:
            import psycopg

            connection = psycopg.connect(libpq, autocommit=True, connect_timeout=5)
        except Exception:  # no driver, no server: MLflow's calls meet it and say so
            connection = None
    try:
        if connection is not None:
            deadline = time.monotonic() + timeout
            while not connection.execute(
                "SELECT pg_try_advisory_lock(%s)", (SCHEMA_LOCK,)
            ).fetchone()[0]:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        yield
    finally:
        if connection is not None:
            connection.close()  # a session's advisory locks end with it


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
        self._types: dict[str, dict[str, str]] | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(sql.replace("?", "%s"), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """``sql`` (one ``INSERT INTO t (columns) VALUES (?, …) …``) for every row, as one
        statement over arrays, a parameter per column (``unnest``): psycopg's pipeline sent a
        statement per row, ~50 ms for a run's ~500 metric points, and a multi-row VALUES costs
        as much again in psycopg's parsing of its placeholders. The rows of one upsert have
        distinct keys (PostgreSQL refuses a row updated twice by one statement)."""
        rows = list(rows)
        if not rows:
            return
        found = _INSERT.match(sql)
        if found is None:
            raise ValueError(f"not an INSERT of one VALUES row: {sql}")
        head, table, columns, tail = found.groups()
        names = [name.strip() for name in columns.split(",")]
        types = self.column_types()
        arrays = ", ".join(f"%s::{types[table][name]}[]" for name in names)
        self.raw.execute(
            f"{head} SELECT * FROM unnest({arrays}){tail}",
            [list(column) for column in zip(*rows, strict=True)],
        )

    def column_types(self) -> dict[str, dict[str, str]]:
        """Each table's columns' PostgreSQL type names (``udt_name``: varchar, float8, …)."""
        if self._types is None:
            self._types = {}
            for table, column, kind in self.raw.execute(
                "SELECT table_name, column_name, udt_name FROM information_schema.columns "
                "WHERE table_schema = current_schema()"
            ):
                self._types.setdefault(table, {})[column] = kind
        return self._types

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
        add_indexes(writer.connection().raw.execute)
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
