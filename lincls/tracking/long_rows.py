"""The chosen runs' params, latest metrics, tags and records, read into one column per name.

Two ways, the same columns (``tests/test_reader.py``):

- **Whole tables, streamed** (SQLite, the runs a large share of the store's): every row of the
  long tables read as Arrow batches by the ADBC driver (no Python object per value), each batch
  cut to the chosen runs and gathered into columns (``lincls.tracking.wide``), then dropped. The
  records are decoded in this thread while two others read the tables' rows, the params and the
  rest (the driver and Arrow's kernels leave Python's lock), each with a connection of its
  own. The chosen runs themselves are listed from their tags' indexes (``whole_info``).
- **By id**: the chosen runs' rows, a chunk of ids a query, over SQLAlchemy (a few runs of a big
  store; PostgreSQL; a SQLite file this process holds, or no driver).

A run's record gives its values as the rows it stands for (``lincls.tracking.record``); a row of
the same name (a tag set on the run later) is kept over it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd
import pyarrow as pa

from lincls.tracking.indexes import TAG_INDEXES
from lincls.tracking.record import RECORD_KEYS, RECORD_TAG, continuation
from lincls.tracking.record_rows import IDS_PER_QUERY
from lincls.tracking.wide import Positions, Wide, add_record_rows, add_records

# The long tables: (run id, name, value), None where MLflow stored a NaN.
LONG = {
    "params": "SELECT run_uuid, key, value FROM params",
    "metrics": "SELECT run_uuid, key, CASE WHEN is_nan THEN NULL ELSE value END "
    "FROM latest_metrics",
    "tags": "SELECT run_uuid, key, value FROM tags",
}
LONG_NAMES = ["run_id", "key", "value"]
# Rows in one batch of the driver (its default is 1,024: a batch's fixed costs, the lookup of
# its runs among them, ran ~25,000 times at a million runs).
BATCH_ROWS = 262_144
BUSY_MS = 60_000  # how long a read waits for a writer's lock (SQLite's busy timeout)


def _literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _tags_sql(tag_sql: Mapping[str, str] | None) -> str:
    """The tags' rows, the tags of ``tag_sql`` as its SQL expression of the row rather than
    their text (``reader.read_rows``)."""
    if not tag_sql:
        return LONG["tags"]
    cases = " ".join(f"WHEN {_literal(key)} THEN ({sql})" for key, sql in tag_sql.items())
    return f"SELECT run_uuid, key, CASE key {cases} ELSE value END FROM tags"


def _keys_sql(tag_keys: Sequence[str] | None) -> str:
    """The condition on a tag's key: one of ``tag_keys`` (None: any), never a record's."""
    if tag_keys is None:
        return "key NOT IN (" + ", ".join(map(_literal, RECORD_KEYS)) + ")"
    kept = [key for key in tag_keys if key not in RECORD_KEYS] or [""]
    return "key IN (" + ", ".join(map(_literal, kept)) + ")"


def _arrow(rows: list[tuple]) -> pa.Table:
    """The driver's (run id, key, value) tuples as an Arrow table."""
    columns = list(zip(*rows, strict=True)) if rows else [[], [], []]
    return pa.table([pa.array(c) for c in columns], names=LONG_NAMES)


class Gathered:
    """The columns being gathered: records' values first, rows' after them."""

    def __init__(self, run_ids: Sequence[str]) -> None:
        self.positions = Positions(run_ids)
        self.params = Wide(self.positions, numeric=False)
        self.metrics = Wide(self.positions, numeric=True)
        self.tags = Wide(self.positions, numeric=False)
        self.recorded_metrics = Wide(self.positions, numeric=True)
        self.recorded_tags = Wide(self.positions, numeric=False)

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(params, metrics, tags), one column per name."""
        return (
            self.params.frame("params."),
            self.recorded_metrics.under(self.metrics).frame("metrics."),
            self.recorded_tags.under(self.tags).frame("tags."),
        )


def _batches(connection: Any, sql: str) -> Iterator[pa.RecordBatch]:
    from adbc_driver_sqlite import StatementOptions

    with connection.cursor() as cursor:
        cursor.adbc_statement.set_options(**{StatementOptions.BATCH_ROWS.value: str(BATCH_ROWS)})
        cursor.execute(sql)
        yield from cursor.fetch_record_batch()


def _connect(db: Path) -> Any:
    """A read-only connection of the driver to ``db`` that waits for a lock as MLflow's do (the
    driver's own does not wait: two of them opening one WAL file at once, one failed)."""
    import adbc_driver_sqlite.dbapi as adbc

    connection = adbc.connect(f"file:{quote(str(db.resolve()))}?mode=ro")
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        cursor.fetchall()
    return connection


def _whole_rows(
    db: Path,
    gathered: Gathered,
    tag_keys: Sequence[str] | None,
    tables: Sequence[str],
    tag_sql: Mapping[str, str] | None = None,
) -> None:
    """Every row of the long ``tables``, streamed into ``gathered``'s row columns."""
    with _connect(db) as connection:
        for table in tables:
            # "+key": a scan of the table, not a lookup of each row through the key's index
            # (9 s against 2 s on 2.7M tags)
            sql = LONG[table]
            if table == "tags":
                sql = f"{_tags_sql(tag_sql)} WHERE +{_keys_sql(tag_keys)}"
            for batch in _batches(connection, sql):
                getattr(gathered, table).add(batch)


def _whole_records(db: Path, gathered: Gathered, wanted: set[str] | None) -> None:
    """Every run's record, streamed and decoded into ``gathered``'s record columns."""
    keys = ", ".join(map(_literal, RECORD_KEYS[1:]))
    with _connect(db) as connection:
        parts: dict[int, dict[str, str]] = {}
        # a record's further parts (one of a few thousand runs has any), by the key's index
        for batch in _batches(connection, f"SELECT run_uuid, key, value FROM tags "
                                          f"WHERE key IN ({keys})"):  # fmt: skip
            rows = gathered.positions.of(batch.column(0))
            for row, key, value in zip(rows.tolist(), batch.column(1).to_pylist(),
                                       batch.column(2).to_pylist(), strict=True):  # fmt: skip
                if row >= 0:
                    parts.setdefault(row, {})[key] = value
        continued = {row: continuation(found) for row, found in parts.items()}
        sql = f"SELECT run_uuid, value FROM tags WHERE +key = {_literal(RECORD_TAG)}"
        for batch in _batches(connection, sql):
            rows = gathered.positions.of(batch.column(0))
            chosen = rows >= 0
            firsts = batch.column(1).filter(pa.array(chosen)).to_pylist()
            add_records(gathered.recorded_metrics, gathered.recorded_tags, rows[chosen], firsts,
                        continued, wanted)  # fmt: skip


INFO_SQL = (
    "SELECT r.run_uuid, r.name, r.experiment_id, r.status, r.artifact_uri, r.start_time, "
    "r.end_time FROM runs r WHERE r.experiment_id = {experiment} AND r.lifecycle_stage = "
    "'active'{status}"
)
# a run with a tag, by the tag's own index (the key a literal: SQLite uses a partial index only
# for a query that names its condition)
HAS_TAG_SQL = " AND r.run_uuid IN (SELECT run_uuid FROM tags WHERE key = {key} AND value = {value})"


def whole_info(
    db: Path, experiment_id: str, tags: Mapping[str, str], status: str | None, columns: list[str]
) -> pd.DataFrame | None:
    """The active runs of ``experiment_id`` with every tag of ``tags`` and ``status`` (None:
    any), newest first, as the reader's ``info`` (``columns``), read by the driver: the ids
    that have each tag listed once from the tag's own index (``indexes.TAG_INDEXES``), which
    SQLite probes as it reads the runs (~1 s for a million), where asking of each run whether
    it has the tags took ~10 us a run. None where a tag has no such index in ``db`` (or no
    driver): the caller asks SQL run by run."""
    try:
        import adbc_driver_sqlite.dbapi as adbc
    except ImportError:
        return None
    with _connect(db) as connection:
        with connection.cursor() as cursor:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            present = {row[0] for row in cursor.fetchall()}
        if any(TAG_INDEXES.get(key) not in present for key in tags):
            return None
        chosen = f" AND r.status = {_literal(status)}" if status is not None else ""
        chosen += "".join(HAS_TAG_SQL.format(key=_literal(key), value=_literal(value))
                          for key, value in tags.items())  # fmt: skip
        try:
            with connection.cursor() as cursor:
                cursor.execute(INFO_SQL.format(experiment=int(experiment_id), status=chosen))
                runs = cursor.fetch_arrow_table()
            # newest first, sorted here: SQLite's sort of a million runs took ~3 s
            runs = runs.sort_by([("start_time", "descending"), ("run_uuid", "ascending")])
        except (adbc.Error, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None
    if runs.num_rows == 0:
        return pd.DataFrame([], columns=columns)  # typed as the caller's query types it
    return runs.rename_columns(columns).to_pandas()


def whole_tables(
    db: Path,
    run_ids: Sequence[str],
    tag_keys: Sequence[str] | None,
    tag_sql: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None:
    """The runs ``run_ids``' (params, metrics, tags; ``tag_sql`` as ``reader.read_rows``) read
    from the whole long tables of the SQLite file ``db`` by the ADBC driver; None where it
    cannot read them (not installed, a column it typed otherwise than MLflow's: read by id
    instead)."""
    try:
        import adbc_driver_sqlite.dbapi as adbc
    except ImportError:
        return None
    gathered = Gathered(run_ids)
    failed: list[BaseException] = []

    def rows(tables: Sequence[str]) -> None:
        try:
            _whole_rows(db, gathered, tag_keys, tables, tag_sql)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    # two readers of rows beside the records' decoding (the driver and Arrow's kernels leave
    # Python's lock): a million runs' 25M params are as many rows as their metrics and tags
    readers = [threading.Thread(target=rows, args=(tables,), name="lincls-long-rows", daemon=True)
               for tables in (("params",), ("metrics", "tags"))]  # fmt: skip
    for reader in readers:
        reader.start()
    try:
        _whole_records(db, gathered, None if tag_keys is None else set(tag_keys))
    except (adbc.Error, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    finally:
        for reader in readers:
            reader.join()
    if failed:
        if isinstance(failed[0], adbc.Error | pa.ArrowInvalid | pa.ArrowNotImplementedError):
            return None
        raise failed[0]
    return gathered.frames()


def by_id(
    db: Any,
    run_ids: Sequence[str],
    tag_keys: Sequence[str] | None,
    tag_sql: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The runs ``run_ids``' (params, metrics, tags; ``tag_sql`` as ``reader.read_rows``) read
    by id over the SQLAlchemy connection ``db``, ``IDS_PER_QUERY`` ids a query (SQLite's limit
    on bound values)."""
    import sqlalchemy

    def query(sql: str, ids: list[str]) -> pa.Table:
        # the driver's own tuples: SQLAlchemy's rows cost ~3 µs each to make
        statement = sqlalchemy.text(sql).bindparams(sqlalchemy.bindparam("ids", expanding=True))
        result = db.execute(statement, {"ids": ids})
        try:
            return _arrow([tuple(row) for row in result.cursor.fetchall()])
        finally:
            result.close()

    gathered = Gathered(run_ids)
    wanted = None if tag_keys is None else set(tag_keys)
    records = "key IN (" + ", ".join(map(_literal, RECORD_KEYS)) + ")"
    for k in range(0, len(run_ids), IDS_PER_QUERY):
        ids = list(run_ids[k : k + IDS_PER_QUERY])
        chunks = query(f"SELECT run_uuid, key, value FROM tags WHERE {records} "
                       "AND run_uuid IN :ids", ids)  # fmt: skip
        add_record_rows(gathered.recorded_metrics, gathered.recorded_tags, chunks, wanted)
        gathered.metrics.add(query(f"{LONG['metrics']} WHERE run_uuid IN :ids", ids))
        gathered.tags.add(query(f"{_tags_sql(tag_sql)} WHERE {_keys_sql(tag_keys)} "
                                "AND run_uuid IN :ids", ids))  # fmt: skip
        gathered.params.add(query(f"{LONG['params']} WHERE run_uuid IN :ids", ids))
    return gathered.frames()
