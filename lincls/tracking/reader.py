"""A study's runs as a pandas table, read with a few SQL queries over MLflow's tables.

``mlflow.search_runs`` builds an ORM object for every param, metric and tag row and then a
``Run`` per run: on 10,000 runs of ~90 values each that is ~35 s, ~8 minutes at 100,000 runs.
Here one query reads the runs and one each their params, latest metrics and tags, and pandas
turns the rows into columns. The table is the one ``mlflow.search_runs`` returns for the same
runs (``tests/test_reader.py`` compares them value by value): ``run_id``, ``experiment_id``,
``status``, ``artifact_uri``, ``start_time``, ``end_time`` (UTC timestamps), then
``metrics.<name>`` (the latest value: at the greatest step, then timestamp), ``params.<name>``
and ``tags.<name>``; newest run first. A store whose schema is not MLflow's revision
``SCHEMA_REVISION`` (the one these queries are written for) or that is not a database (a
tracking server) is read with ``mlflow.search_runs`` itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lincls.errors import LinclsInputError
from lincls.paths import resolve_tracking_uri, sqlite_path

# The MLflow schema revision (alembic) the queries below are written for.
SCHEMA_REVISION = "dc11669786a5"
DATABASE_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
INFO = ["run_id", "experiment_id", "status", "artifact_uri", "start_time", "end_time"]
ROLE_RUN = "run"


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
    ``name`` and ``start_ms``) and their params, latest metrics and tags, one column per name."""

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


def _wide(rows: list, order: pd.Index, prefix: str) -> pd.DataFrame:
    """(run id, name, value) rows as one column per name, in the runs' order."""
    if not rows:
        return pd.DataFrame(index=order)
    long = pd.DataFrame(rows, columns=["run_id", "key", "value"])
    wide = long.pivot(index="run_id", columns="key", values="value").reindex(order)
    wide.columns = [f"{prefix}{key}" for key in wide.columns]
    return wide.sort_index(axis=1)


def read_rows(
    engine: Any, experiment_id: str, tags: Mapping[str, str] = {}, status: str | None = None
) -> Rows:
    """The active runs of ``experiment_id`` with every tag of ``tags`` (name: value) and
    ``status`` (None: any), read with four queries."""
    import sqlalchemy

    where, values = _where(experiment_id, tags, status)
    chosen = f"SELECT r.run_uuid FROM runs r WHERE {where}"
    with engine.connect() as db:

        def query(sql: str) -> list[tuple]:
            # the driver's own tuples: SQLAlchemy's rows cost ~3 µs each to make, and pandas
            # probes each for attributes it lacks, every miss raising inside SQLAlchemy (a
            # 10,000-run read spent 13 s of 19 s there)
            result = db.execute(sqlalchemy.text(sql), values)
            try:
                return [tuple(row) for row in result.cursor.fetchall()]
            finally:
                result.close()

        info = pd.DataFrame(
            query(
                "SELECT r.run_uuid, r.name, r.experiment_id, r.status, r.artifact_uri, "
                f"r.start_time, r.end_time FROM runs r WHERE {where} "
                "ORDER BY r.start_time DESC, r.run_uuid"
            ),
            columns=["run_id", "name", "experiment_id", "status", "artifact_uri", "start_ms",
                     "end_ms"],
        )  # fmt: skip
        order = pd.Index(info["run_id"], name="run_id")
        params = query(f"SELECT run_uuid, key, value FROM params WHERE run_uuid IN ({chosen})")
        metrics = query(
            "SELECT run_uuid, key, CASE WHEN is_nan THEN NULL ELSE value END "
            f"FROM latest_metrics WHERE run_uuid IN ({chosen})"
        )
        tag_rows = query(f"SELECT run_uuid, key, value FROM tags WHERE run_uuid IN ({chosen})")
    metric_frame = _wide(metrics, order, "metrics.").astype(float)
    return Rows(
        info=info,
        params=_objects(_wide(params, order, "params.")),
        metrics=metric_frame,
        tags=_objects(_wide(tag_rows, order, "tags.")),
    )


def _objects(wide: pd.DataFrame) -> pd.DataFrame:
    """Text columns with None where a run has no value (as ``search_runs`` fills them)."""
    return wide.astype(object).where(wide.notna(), None)


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
    data.update({name: column.to_numpy() for name, column in rows.metrics.items()})
    for text in (rows.params, rows.tags):
        data.update({name: column.tolist() for name, column in text.items()})
    return pd.DataFrame(data)


def curves_of(
    engine: Any, run_ids: Sequence[str], keys: Iterable[str]
) -> dict[str, dict[str, list]]:
    """Each metric of ``keys``: every run's logged points as (step, value), ordered by step then
    timestamp (NaN where MLflow stored a NaN), by run id."""
    import sqlalchemy

    keys = list(keys)
    out: dict[str, dict[str, list]] = {key: {run_id: [] for run_id in run_ids} for key in keys}
    if not keys or not len(run_ids):
        return out
    wanted = set(run_ids)
    statement = sqlalchemy.text(
        "SELECT run_uuid, key, step, CASE WHEN is_nan THEN NULL ELSE value END FROM metrics "
        "WHERE key IN :keys ORDER BY run_uuid, key, step, timestamp"
    ).bindparams(sqlalchemy.bindparam("keys", expanding=True))
    with engine.connect() as db:
        for run_id, key, step, value in db.execute(statement, {"keys": keys}):
            if run_id in wanted:
                out[key][run_id].append((int(step), float("nan") if value is None else value))
    return out


def _filters(
    study: str | None, learner: str | None, dataset: str | None, role: str | None
) -> dict[str, str]:
    chosen = {"lincls.study": study, "learner": learner, "dataset": dataset, "lincls.role": role}
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
    for key in curves:
        frame[f"curves.{key}"] = [_history(client, run_id, key) for run_id in frame["run_id"]]
    return frame


def _history(client, run_id: str, key: str) -> list[tuple[int, float]]:
    points = sorted((p.step, p.timestamp, p.value) for p in client.get_metric_history(run_id, key))
    return [(int(step), float(value)) for step, _, value in points]


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
    """
    uri = resolve_tracking_uri(uri)
    db = sqlite_path(uri)
    if db is not None and not db.is_file():
        raise LinclsInputError("uri", f"no MLflow store at {uri} (run a sweep first)")
    tags = _filters(study, learner, dataset, role)
    engine = engine_for(uri)
    if engine is None:
        return _by_mlflow(uri, experiment, tags, status, list(curves))
    try:
        experiment_id = experiment_id_of(engine, experiment)
        if experiment_id is None:
            raise LinclsInputError("experiment", f"no experiment named {experiment!r} in {uri}")
        frame = search_frame(read_rows(engine, experiment_id, tags, status))
        points = curves_of(engine, list(frame["run_id"]), curves)
    finally:
        engine.dispose()
    for key in curves:
        frame[f"curves.{key}"] = [points[key][run_id] for run_id in frame["run_id"]]
    return frame
