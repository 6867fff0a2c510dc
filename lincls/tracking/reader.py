"""A study's runs as a pandas table, read with a few SQL queries over MLflow's tables.

``mlflow.search_runs`` builds an ORM object for every param, metric and tag row and then a
``Run`` per run: on 10,000 runs of ~90 values each that is ~35 s, ~8 minutes at 100,000 runs.
Here one query reads the runs and one each their params, latest metrics, tags and records (on
SQLite, for a large share of the store's runs, whole tables streamed as Arrow batches: no Python
object per value; ``lincls.tracking.long_rows``), and each row goes to its (name, run) cell by
integer codes. The table is the one
``mlflow.search_runs`` returns for the same runs (``tests/test_reader.py`` compares them value
by value): ``run_id``, ``experiment_id``, ``status``, ``artifact_uri``, ``start_time``,
``end_time`` (UTC timestamps), then ``metrics.<name>`` (the latest value: at the greatest step,
then timestamp), ``params.<name>`` and ``tags.<name>``; newest run first; a run's record
(``tracking.record``) gives its values as the rows they stand for. A store whose schema
is not MLflow's revision ``SCHEMA_REVISION`` (the one these queries are written for) or that is
not a database (a tracking server) is read with ``mlflow.search_runs`` itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from lincls.errors import LinclsInputError
from lincls.paths import resolve_tracking_uri, sqlite_path
from lincls.tracking import long_rows
from lincls.tracking.record_rows import curves_of, expand_frame, histories, history
from lincls.tracking.store import check_store_file

__all__ = ["curves_of", "history"]  # re-exported: where the report has always found them

# The MLflow schema revision (alembic) the queries below are written for.
SCHEMA_REVISION = "dc11669786a5"
DATABASE_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
INFO = ["run_id", "experiment_id", "status", "artifact_uri", "start_time", "end_time"]
INFO_ROWS = ["run_id", "name", "experiment_id", "status", "artifact_uri", "start_ms", "end_ms"]
ROLE_RUN = "run"
STUDY = "lincls.study"


def engine_for(uri: str) -> Any:
    """A SQLAlchemy engine on the store at ``uri`` when it is a database of ``SCHEMA_REVISION``,
    else None (read through MLflow)."""
    if uri.partition(":")[0].partition("+")[0].lower() not in DATABASE_SCHEMES:
        return None
    db = sqlite_path(uri)
    if db is not None and not db.is_file():
        return None  # connecting would make the file
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    engine = sqlalchemy.create_engine(uri, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            revision = connection.execute(
                sqlalchemy.text("SELECT version_num FROM alembic_version")
            ).scalar()
    except sqlalchemy.exc.DBAPIError:  # no alembic_version table: not a store of MLflow's
        revision = None
    if revision != SCHEMA_REVISION:
        engine.dispose()
        return None
    return engine


@dataclass
class Rows:
    """The runs read from the store: their attributes (one row per run, newest first, with
    ``name`` and ``start_ms``) and their params, latest metrics and tags, one column per name
    (text columns of pandas' ``str`` dtype, NaN where a run has no value; a column no run has a
    text in holds None)."""

    info: pd.DataFrame
    params: pd.DataFrame
    metrics: pd.DataFrame
    tags: pd.DataFrame


def _where(experiment_id: str, tags: Mapping[str, str], status: str | None) -> tuple[str, dict]:
    """The runs' WHERE clause (as MLflow's search: active runs of one experiment) and its
    bound values."""
    clauses = ["r.experiment_id = :experiment_id", "r.lifecycle_stage = 'active'"]
    values: dict[str, Any] = {"experiment_id": int(experiment_id)}
    if status is not None:
        clauses.append("r.status = :status")
        values["status"] = status
    for k, (key, value) in enumerate(sorted(tags.items())):
        clauses.append(
            f"EXISTS (SELECT 1 FROM tags t WHERE t.run_uuid = r.run_uuid "
            f"AND t.key = :key{k} AND t.value = :value{k})"
        )
        values[f"key{k}"], values[f"value{k}"] = key, value
    return " AND ".join(clauses), values


# Read a whole long table, keeping the chosen runs' rows, when they are at least this share of
# the store's: SQLite's index lookups run by run take ~3x one pass (3.0 s against 1.1 s a table).
WHOLE_TABLE_SHARE = 0.125


def open_here(db: Path) -> bool:
    """Whether this process holds the SQLite file ``db`` (or its WAL files) open, or cannot tell.
    The driver bundles a SQLite of its own, and two libraries in one process do not see each
    other's (POSIX, per-process) locks: its connection would reset the WAL index the others use
    and drop their locks on closing ("disk I/O error" on their next statement)."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        return True  # cannot tell: take the safe way
    target = str(db.resolve())
    names = {target, target + "-wal", target + "-shm"}
    for fd in fds.iterdir():
        try:
            if os.readlink(fd) in names:
                return True
        except OSError:
            continue  # closed between the listing and the look
    return False


def read_rows(
    engine: Any,
    experiment_id: str,
    tags: Mapping[str, str] = {},
    status: str | None = None,
    tag_keys: Sequence[str] | None = None,
    oldest_first: bool = False,
    tag_sql: Mapping[str, str] | None = None,
) -> Rows:
    """The active runs of ``experiment_id`` with every tag of ``tags`` (name: value) and
    ``status`` (None: any); ``tag_keys`` (None: all) are the tags read. A run's record gives its
    values as the rows they stand for (``lincls.tracking.long_rows``). The runs are newest first
    (MLflow's order), or by start time then run id (``oldest_first``: the report's order, the
    columns made in it rather than reordered, a copy of them all). ``tag_sql`` reads a tag as
    an SQL expression of its row (``value``, ``run_uuid``) rather than as its text: one fact of a
    long text (a million runs' descriptions are ~0.5 GB) in the same pass over the tags."""
    import sqlalchemy

    requested = None if tag_keys is None else list(tag_keys)
    where, values = _where(experiment_id, tags, status)
    sqlite = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
    # the driver reads a file this process does not hold open (``open_here``)
    driver = sqlite is not None and not open_here(Path(sqlite))
    info = long_rows.whole_info(Path(sqlite), experiment_id, tags, status, INFO_ROWS) if driver \
        else None  # fmt: skip
    with engine.connect() as db:

        def query(sql: str, bound: Mapping[str, Any]) -> list[tuple]:
            # the driver's own tuples: SQLAlchemy's rows cost ~3 µs each to make, and pandas
            # probes each for attributes it lacks, every miss raising inside SQLAlchemy (a
            # 10,000-run read spent 13 s of 19 s there)
            result = db.execute(sqlalchemy.text(sql), bound)
            try:
                return [tuple(row) for row in result.cursor.fetchall()]
            finally:
                result.close()

        if info is None:
            info = pd.DataFrame(
                query(
                    "SELECT r.run_uuid, r.name, r.experiment_id, r.status, r.artifact_uri, "
                    f"r.start_time, r.end_time FROM runs r WHERE {where} "
                    "ORDER BY r.start_time DESC, r.run_uuid",
                    values,
                ),
                columns=INFO_ROWS,
            )
        everyone = query("SELECT COUNT(*) FROM runs", {})[0][0] if driver and len(info) else 0
    # this connection closed (NullPool keeps none): the driver reads if nothing else holds it
    if oldest_first:
        info = info.sort_values(["start_ms", "run_id"], kind="stable").reset_index(drop=True)
    ids = info["run_id"].tolist()
    found = None
    if everyone and len(info) >= WHOLE_TABLE_SHARE * everyone:
        found = long_rows.whole_tables(Path(sqlite), ids, requested, tag_sql)
    if found is None:
        with engine.connect() as db:
            found = long_rows.by_id(db, ids, requested, tag_sql)
    params, metrics, tags = found
    return Rows(info=info, params=params, metrics=metrics, tags=tags)


def _timestamps(ms: pd.Series) -> Any:
    """Milliseconds since the epoch as ``search_runs`` turns them into UTC times (all missing:
    its missing time, which pandas types otherwise)."""
    if ms.isna().all():
        return [pd.to_datetime(None, unit="ms", utc=True)] * len(ms)
    return pd.to_datetime(ms, unit="ms", utc=True).array


def search_frame(rows: Rows) -> pd.DataFrame:
    """The runs as ``mlflow.search_runs`` gives them (module docstring). Text columns are built
    from lists as it builds them, so pandas infers the same dtypes."""
    info = rows.info
    data: dict[str, Any] = {
        "run_id": info["run_id"].tolist(),
        "experiment_id": info["experiment_id"].astype(str).tolist(),
        "status": info["status"].tolist(),
        "artifact_uri": info["artifact_uri"].tolist(),
        "start_time": _timestamps(info["start_ms"]),
        "end_time": _timestamps(info["end_ms"]),
    }
    for wide in (rows.metrics, rows.params, rows.tags):
        data.update({name: column.array for name, column in wide.items()})
    return pd.DataFrame(data)


def _studies(engine: Any, experiment_id: str) -> list[str]:
    """The study tag of every active run of ``experiment_id``, each once."""
    import sqlalchemy

    where, values = _where(experiment_id, {}, None)
    sql = (
        f"SELECT DISTINCT t.value FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid WHERE {where}"
    )
    with engine.connect() as db:
        found = db.execute(sqlalchemy.text(f"{sql} AND t.key = :key"), {**values, "key": STUDY})
        return [row[0] for row in found]


def is_study(engine: Any, experiment_id: str, name: str) -> bool:
    """Whether an active run of ``experiment_id`` is of study ``name``, or is a sweep whose run
    id is ``name``: two lookups (the study's tag by its index, ``indexes.TAG_INDEXES``), where
    listing the studies (``study_rows``) reads every run (~30 s at a million)."""
    import sqlalchemy

    active = "r.experiment_id = :experiment_id AND r.lifecycle_stage = 'active'"
    queries = (
        # the key a literal: SQLite uses the tag's partial index only for a query naming it
        f"SELECT 1 FROM tags t JOIN runs r ON r.run_uuid = t.run_uuid WHERE t.key = '{STUDY}' "
        f"AND t.value = :name AND {active} LIMIT 1",
        f"SELECT 1 FROM runs r JOIN tags o ON o.run_uuid = r.run_uuid AND o.key = 'lincls.role' "
        f"AND o.value = 'sweep' WHERE r.run_uuid = :name AND {active}",
    )
    values = {"experiment_id": int(experiment_id), "name": name}
    with engine.connect() as db:
        return any(db.execute(sqlalchemy.text(sql), values).first() for sql in queries)


def study_rows(engine: Any, experiment_id: str) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The store's studies, aggregated in SQL (100,000 runs listed in ~3 s, where reading them
    whole took ~20 s): the sweeps (role ``sweep``: run id, study, start ms, status;
    newest first), each sweep's runs (parent run id, runs, FINISHED), and the runs made outside
    any sweep by study (study, runs, FINISHED, first start ms; the group of the newest run
    first). A run that is not a sweep counts as a sweep's run, whatever its role tag."""
    import sqlalchemy

    where, values = _where(experiment_id, {}, None)
    finished = "SUM(CASE WHEN r.status = 'FINISHED' THEN 1 ELSE 0 END)"
    tag = "EXISTS (SELECT 1 FROM tags x WHERE x.run_uuid = r.run_uuid AND x.key = '{}'{})"
    not_sweep = "NOT " + tag.format("lincls.role", " AND x.value = 'sweep'")
    study = f"LEFT JOIN tags s ON s.run_uuid = r.run_uuid AND s.key = '{STUDY}'"
    queries = (
        f"SELECT r.run_uuid, s.value, r.start_time, r.status FROM runs r {study} "
        "JOIN tags o ON o.run_uuid = r.run_uuid AND o.key = 'lincls.role' AND o.value = 'sweep' "
        f"WHERE {where} ORDER BY r.start_time DESC, r.run_uuid",
        f"SELECT p.value, COUNT(*), {finished} FROM runs r JOIN tags p ON p.run_uuid = r.run_uuid "
        f"AND p.key = 'mlflow.parentRunId' WHERE {where} AND {not_sweep} GROUP BY p.value",
        f"SELECT s.value, COUNT(*), {finished}, MIN(r.start_time) FROM runs r {study} "
        f"WHERE {where} AND {not_sweep} AND NOT {tag.format('mlflow.parentRunId', '')} "
        "GROUP BY s.value ORDER BY MAX(r.start_time) DESC, MIN(r.run_uuid)",
    )
    with engine.connect() as db:
        return tuple(
            [tuple(row) for row in db.execute(sqlalchemy.text(sql), values)] for sql in queries
        )


def _check_study(study: str, values: Iterable[Any], uri: str) -> None:
    """Raise ``LinclsInputError`` unless some run of the store is of ``study`` (``values``: the
    study tag of every run), naming the studies it has."""
    known = sorted({str(v) for v in values if isinstance(v, str)})
    if study not in known:
        raise LinclsInputError(
            "study",
            f"no run of study {study!r} in {uri}; its studies: {', '.join(known) or 'none'}",
        )


def _filters(
    study: str | None, learner: str | None, dataset: str | None, role: str | None
) -> dict[str, str]:
    chosen = {STUDY: study, "learner": learner, "dataset": dataset, "lincls.role": role}
    return {key: value for key, value in chosen.items() if value is not None}


def _by_mlflow(
    uri: str, experiment: str, tags: Mapping[str, str], status: str | None, curves: Sequence[str]
) -> pd.DataFrame:
    """The same table through ``mlflow.search_runs`` (a store these queries do not read)."""
    import mlflow
    from mlflow.tracking import MlflowClient
    from mlflow.tracking._tracking_service.utils import _use_tracking_uri

    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise LinclsInputError("experiment", f"no experiment named {experiment!r} in {uri}")
    for key, value in [*tags.items(), ("status", status or "")]:
        if "'" in key + value or "\\" in key + value:
            raise LinclsInputError(key, f"must not contain quotes or backslashes, got {value!r}")
    clauses = [f"tags.`{key}` = '{value}'" for key, value in sorted(tags.items())]
    if status is not None:
        clauses.append(f"attributes.status = '{status}'")
    with _use_tracking_uri(uri):
        frame = mlflow.search_runs(
            [found.experiment_id], filter_string=" and ".join(clauses), max_results=2**31 - 1
        )
        if frame.empty and STUDY in tags:
            every = mlflow.search_runs([found.experiment_id], max_results=2**31 - 1)
            _check_study(tags[STUDY], every.get(f"tags.{STUDY}", []), uri)
    frame = expand_frame(frame)
    if curves:
        points = histories(client, list(frame["run_id"]), curves)
        for key in curves:
            frame[f"curves.{key}"] = [points[key][run_id] for run_id in frame["run_id"]]
    return frame


def experiment_id_of(engine: Any, name: str) -> str | None:
    """The id of the experiment named ``name`` (None: there is none)."""
    import sqlalchemy

    with engine.connect() as db:
        found = db.execute(
            sqlalchemy.text("SELECT experiment_id FROM experiments WHERE name = :name"),
            {"name": name},
        ).scalar()
    return None if found is None else str(found)


def runs(
    uri: str | None = None,
    study: str | None = None,
    experiment: str = "lincls",
    learner: str | None = None,
    dataset: str | None = None,
    status: str | None = "FINISHED",
    curves: Sequence[str] = (),
    role: str | None = ROLE_RUN,
) -> pd.DataFrame:
    """A study's runs as one table, the one ``mlflow.search_runs`` returns (module docstring).

    ``uri`` is the store (None: ``MLFLOW_TRACKING_URI``, else lincls' default); ``study``,
    ``learner``, ``dataset`` and ``role`` keep the runs with that tag (``lincls.study``,
    ``learner``, ``dataset``, ``lincls.role``; None: any; the default role ``run`` leaves the
    sweeps' parent runs out); ``status`` keeps runs in that state (None: any). Each metric named
    in ``curves`` adds a column ``curves.<name>``: the run's logged (step, value) points.
    ``LinclsInputError`` (one line) for a store that is missing or no store, and for a study no
    run has (it names the studies there are); a known study with no run chosen is an empty table.
    """
    uri = resolve_tracking_uri(uri)
    check_store_file(uri, "uri")
    tags = _filters(study, learner, dataset, role)
    engine = engine_for(uri)
    if engine is None:
        return _by_mlflow(uri, experiment, tags, status, list(curves))
    try:
        experiment_id = experiment_id_of(engine, experiment)
        if experiment_id is None:
            raise LinclsInputError("experiment", f"no experiment named {experiment!r} in {uri}")
        frame = search_frame(read_rows(engine, experiment_id, tags, status))
        if frame.empty and study is not None:  # a study no run has: a misspelt name, say so
            _check_study(study, _studies(engine, experiment_id), uri)
        points = curves_of(engine, list(frame["run_id"]), curves)
    finally:
        engine.dispose()
    for key in curves:
        frame[f"curves.{key}"] = [points[key][run_id] for run_id in frame["run_id"]]
    return frame
