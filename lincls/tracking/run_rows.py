"""MLflow's rows of one run, as its SQLAlchemy store writes them for a new run: the run and its
tags at creation, then its params, metric points (and latest metrics), tags and dataset input;
written by ``SqliteRuns`` (and ``PostgresRuns``) inside their transactions."""

from __future__ import annotations

import math
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

from lincls.tracking.plain import plain_batch, plain_dataset, plain_file_location

RUN_NAME_TAG = "mlflow.runName"
USER_TAG = "mlflow.user"
LARGEST = 1.7976931348623157e308  # MLflow stores ±inf as the largest float of that sign


def new_run_id() -> str:
    """A new run's id, in MLflow's form (32 hex digits): a UUID of version 7 (RFC 9562), whose
    first 48 bits are the time in milliseconds and the rest random. MLflow keys its tags,
    params, metrics and inputs by (key, run id), so uuid4's random ids put each row of a new run
    on its own page of each index, and a commit copied a page a row into the log: writing runs
    into a store of 100,000 took 13-27 ms a run, where ids in time order, each new run's rows at
    the end of every index, took ~3 ms (two writers, 50 runs a commit)."""
    value = (time.time_ns() // 1_000_000 & (1 << 48) - 1) << 80 | int.from_bytes(os.urandom(10))
    value = value & ~(0xF << 76) | 0x7 << 76  # the version
    value = value & ~(0x3 << 62) | 0x2 << 62  # the variant
    return f"{value:032x}"


def _error(message: str, code: str = "INVALID_PARAMETER_VALUE") -> Exception:
    from mlflow.exceptions import MlflowException

    return MlflowException(message, error_code=code)


def _postgres(db: Any) -> bool:
    """Whether ``db`` is a PostgreSQL connection (``tracking.postgres_runs``), not SQLite's."""
    return getattr(db, "dialect", "sqlite") == "postgresql"


def _sanitized(value: float) -> tuple[float, int]:
    """(stored value, is_nan) as MLflow stores a metric value."""
    if math.isnan(value):
        return 0.0, 1
    if math.isinf(value):
        return (LARGEST if value > 0 else -LARGEST), 0
    return value, 0


def _named(run_name: str | None, tags: Mapping[str, str]) -> dict[str, str]:
    """``tags`` with the run's name (``mlflow.runName``) as ``create_run`` names a run: the
    given name, else the tag's, else a random one; refused when the two differ."""
    tags = dict(tags)
    tagged = tags.get(RUN_NAME_TAG)
    if run_name and tagged and run_name != tagged:
        raise _error(
            f"Both 'run_name' argument and 'mlflow.runName' tag are specified, but with "
            f"different values (run_name='{run_name}', mlflow.runName='{tagged}')."
        )
    if not (run_name or tagged):
        from mlflow.utils.name_utils import _generate_random_name

        run_name = _generate_random_name()
    run_name = run_name or tagged
    tags.setdefault(RUN_NAME_TAG, run_name)
    return tags


def _experiment_location(db: Any, experiment_id: str) -> str:
    """The artifact location of an active experiment (MLflow's refusals otherwise)."""
    row = db.execute(
        "SELECT artifact_location, lifecycle_stage FROM experiments WHERE experiment_id = ?",
        (int(experiment_id),),
    ).fetchone()
    if row is None:
        raise _error(f"No Experiment with id={experiment_id} exists", "RESOURCE_DOES_NOT_EXIST")
    if row[1] != "active":
        raise _error(
            f"The experiment {experiment_id} must be in the 'active' state. "
            f"Current state is {row[1]}."
        )
    return row[0]


def _insert_run(db: Any, experiment_id: str, run_id: str, run_name: str, tags: Mapping[str, str],
                start: int, status: str = "RUNNING", end: int | None = None,
                location: str | None = None) -> str:  # fmt: skip
    """The run's row and its tags, in an active experiment (its artifact ``location``, looked up
    when not given); its artifact URI."""
    if location is None:
        location = _experiment_location(db, experiment_id)
    artifact_uri = _artifact_uri(location, run_id)
    db.execute(
        "INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name, "
        "user_id, status, start_time, end_time, source_version, lifecycle_stage, "
        "artifact_uri, experiment_id, deleted_time) "
        "VALUES (?, ?, 'UNKNOWN', '', '', ?, ?, ?, ?, '', 'active', ?, ?, NULL)",
        (run_id, run_name, tags.get(USER_TAG, "unknown"), status, start, end, artifact_uri,
         int(experiment_id)),
    )  # fmt: skip
    db.executemany(
        "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)",
        [(key, value, run_id) for key, value in tags.items()],
    )
    return artifact_uri


def _log(db: Any, experiment_id: int, run_id: str, params, points, tags, dataset_input) -> None:
    """A run's params, metric points, tags (set or replaced) and dataset input."""
    _insert_params(db, run_id, params)
    _insert_metrics(db, run_id, points)
    _upsert_tags(db, run_id, tags)
    if dataset_input:
        _insert_input(db, experiment_id, run_id, dataset_input)


def _validated(
    params: Mapping[str, str],
    metrics: Iterable[tuple[str, float, int, int]],
    tags: Mapping[str, str],
) -> tuple[list[tuple[str, str]], list[tuple[str, float, int, int, int]], list[tuple[str, str]]]:
    """MLflow's checks of a batch: names, lengths (values truncated where it truncates), and
    metric values, timestamps and steps; metric values stored as it stores them."""
    metrics = list(metrics)
    if plain_batch(params, metrics, tags):  # what MLflow's checks would pass unchanged
        return (
            [(key, str(value)) for key, value in params.items()],
            [_point(key, value, stamp, step) for key, value, stamp, step in metrics],
            [(key, str(value)) for key, value in tags.items()],
        )  # fmt: skip
    from mlflow.utils.validation import _validate_metric, _validate_param, _validate_tag

    checked_params = []
    for index, (key, value) in enumerate(params.items()):
        param = _validate_param(key, str(value), path=f"params[{index}]")
        checked_params.append((param.key, param.value))
    checked_tags = []
    for index, (key, value) in enumerate(tags.items()):
        tag = _validate_tag(key, str(value), path=f"tags[{index}]")
        checked_tags.append((tag.key, tag.value))
    points, names = [], set()
    for index, (key, value, timestamp, step) in enumerate(metrics):
        if key not in names or not isinstance(value, float):  # a name is checked once
            _validate_metric(key, value, timestamp, step, path=f"metrics[{index}]")
            names.add(key)
        points.append(_point(key, value, timestamp, step))
    return checked_params, points, checked_tags


def _point(key: str, value: float, timestamp: int, step: int) -> tuple[str, float, int, int, int]:
    """(name, stored value, timestamp, step, is_nan) of a checked metric point."""
    stored, is_nan = _sanitized(float(value))
    return key, stored, int(timestamp), int(step), is_nan


def _artifact_uri(location: str, run_id: str) -> str:
    """A new run's artifact URI under its experiment's artifact location, as MLflow makes it."""
    if plain_file_location(location):
        return f"{location.rstrip('/')}/{run_id}/artifacts"
    from mlflow.utils.uri import append_to_uri_path

    return append_to_uri_path(location, run_id, "artifacts")


def _insert_params(db: Any, run_id: str, params: list[tuple[str, str]]) -> None:
    if not params:
        return  # keys come from a mapping: never twice in one write
    existing = dict(db.execute("SELECT key, value FROM params WHERE run_uuid = ?", (run_id,)))
    changed = [
        {"key": k, "old_value": existing[k], "new_value": v}
        for k, v in params
        if k in existing and existing[k] != v
    ]
    if changed:
        raise _error(
            f"Changing param values is not allowed. Params were already logged='{changed}' "
            f"for run ID='{run_id}'."
        )
    db.executemany(
        "INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)",
        [(k, v, run_id) for k, v in params if k not in existing],
    )


def _insert_metrics(db: Any, run_id: str, points: list[tuple[str, float, int, int, int]]) -> None:
    """The points (a point logged twice is kept once) and each name's latest: the greatest
    (step, timestamp, value), the first of equals."""
    if not points:
        return
    postgres = _postgres(db)
    if postgres:  # is_nan is a boolean column there, an integer one on SQLite
        points = [(k, v, t, s, bool(nan)) for k, v, t, s, nan in points]
    db.executemany(
        ("INSERT INTO" if postgres else "INSERT OR IGNORE INTO")
        + " metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, ?, ?, ?)"
        + (" ON CONFLICT DO NOTHING" if postgres else ""),
        [(*point, run_id) for point in points],
    )
    latest: dict[str, tuple[str, float, int, int, int]] = {}
    for point in points:
        key, value, timestamp, step, _ = point
        best = latest.get(key)
        if best is None or (step, timestamp, value) > (best[3], best[2], best[1]):
            latest[key] = point
    stored = {
        row[0]: row[1:]
        for row in db.execute(
            "SELECT key, step, timestamp, value FROM latest_metrics WHERE run_uuid = ?", (run_id,)
        )
    }
    rows = []
    for key, (_, value, timestamp, step, is_nan) in latest.items():
        if key in stored and not (step, timestamp, value) > tuple(stored[key]):
            continue
        rows.append((key, value, timestamp, step, is_nan, run_id))
    db.executemany(
        "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key, run_uuid) DO UPDATE SET "
        "value = excluded.value, timestamp = excluded.timestamp, step = excluded.step, "
        "is_nan = excluded.is_nan",
        rows,
    )


def _upsert_many(db: Any, rows: list[tuple[str, str, str]]) -> None:
    """(key, value, run id) rows set as tags, a row's value replacing the tag's."""
    db.executemany(
        "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?) "
        "ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value",
        rows,
    )


def _upsert_tags(db: Any, run_id: str, tags: list[tuple[str, str]]) -> None:
    """Tags set, the last value of a key winning; the run-name tag renames the run too."""
    final = dict(tags)
    _upsert_many(db, [(k, v, run_id) for k, v in final.items()])
    if RUN_NAME_TAG in final:
        db.execute("UPDATE runs SET name = ? WHERE run_uuid = ?", (final[RUN_NAME_TAG], run_id))


def training_input(dataset: Mapping[str, str]) -> Any:
    """A run's data as MLflow's ``DatasetInput`` (source type ``code``, context ``train``) from
    its ``name``, ``digest``, ``source`` and ``profile``."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    entity = Dataset(
        name=dataset["name"],
        digest=dataset["digest"],
        source_type="code",
        source=dataset.get("source", "{}"),
        profile=dataset.get("profile"),
    )
    return DatasetInput(entity, tags=[InputTag("mlflow.data.context", "train")])


def _insert_input(db: Any, experiment_id: int, run_id: str, dataset: Mapping[str, str]) -> None:
    """The dataset (one row per experiment, name and digest) and its edge to the run."""
    if plain_dataset(dataset):  # what MLflow's checks pass unchanged: no MLflow import
        entity = SimpleNamespace(
            name=dataset["name"], digest=dataset["digest"], source_type="code",
            source=dataset.get("source", "{}"), schema=None, profile=dataset.get("profile"),
        )  # fmt: skip
        context = ("mlflow.data.context", "train")
    else:
        from mlflow.utils.validation import _validate_dataset_inputs

        given = training_input(dataset)
        _validate_dataset_inputs([given])
        entity, (tag,) = given.dataset, given.tags
        context = (tag.key, tag.value)
    if _postgres(db):  # another writer may add the same dataset meanwhile: its row is kept
        db.execute(
            "INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, "
            "dataset_source_type, dataset_source, dataset_schema, dataset_profile) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (uuid.uuid4().hex, experiment_id, entity.name, entity.digest, entity.source_type,
             entity.source, entity.schema, entity.profile),
        )  # fmt: skip
    found = db.execute(
        "SELECT dataset_uuid FROM datasets WHERE experiment_id = ? AND name = ? AND digest = ?",
        (experiment_id, entity.name, entity.digest),
    ).fetchone()
    if found is None:
        dataset_uuid = uuid.uuid4().hex
        db.execute(
            "INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, "
            "dataset_source_type, dataset_source, dataset_schema, dataset_profile) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (dataset_uuid, experiment_id, entity.name, entity.digest, entity.source_type,
             entity.source, entity.schema, entity.profile),
        )  # fmt: skip
    else:
        dataset_uuid = found[0]
    linked = db.execute(
        "SELECT 1 FROM inputs WHERE source_type = 'DATASET' AND source_id = ? "
        "AND destination_type = 'RUN' AND destination_id = ?",
        (dataset_uuid, run_id),
    ).fetchone()
    if linked is not None:
        return
    input_uuid = new_run_id()  # its unique index too: in time order
    db.execute(
        "INSERT INTO inputs (input_uuid, source_type, source_id, destination_type, "
        "destination_id, step) VALUES (?, 'DATASET', ?, 'RUN', ?, 0)",
        (input_uuid, dataset_uuid, run_id),
    )
    db.execute(
        "INSERT INTO input_tags (input_uuid, name, value) VALUES (?, ?, ?)",
        (input_uuid, *context),
    )
