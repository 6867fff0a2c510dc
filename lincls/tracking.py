"""MLflow: where the store is, and one run written with one batched call.

A run is created (RUNNING), then written with a single ``log_batch`` holding its params, metrics,
curves and tags, then closed FINISHED; one call per metric point costs ~50× more on SQLite. A run
that fails after it was created is closed FAILED with the error in the tag ``error``.
"""

from __future__ import annotations

import functools
import math
import subprocess
import time
from collections.abc import Iterable, Mapping
from typing import Any

from lincls.paths import default_tracking_uri, project_root, resolve_tracking_uri, sqlite_path

__all__ = ["default_tracking_uri", "project_root", "resolve_tracking_uri"]  # re-exported

DEFAULT_EXPERIMENT = "lincls"
PARAM_VALUE_LIMIT = 6000


def artifact_root(uri: str) -> str | None:
    """Where a SQLite store keeps artifacts: ``mlartifacts/`` beside the database file."""
    db = sqlite_path(uri)
    return None if db is None else (db.parent / "mlartifacts").resolve().as_uri()


_OPENED: dict[tuple[str, str], tuple[Any, str]] = {}


def open_experiment(uri: str, name: str = DEFAULT_EXPERIMENT):
    """A client of the store at ``uri`` and the id of experiment ``name`` (created if missing).

    Kept per process: a sweep's jobs would otherwise look the experiment up twice a run.
    """
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    key = (uri, name)
    if key in _OPENED:
        return _OPENED[key]
    db = sqlite_path(uri)
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        experiment_id = experiment.experiment_id
    else:
        try:
            experiment_id = client.create_experiment(name, artifact_location=artifact_root(uri))
        except MlflowException:  # another process created it in between
            experiment_id = client.get_experiment_by_name(name).experiment_id
    _OPENED[key] = (client, experiment_id)
    return client, experiment_id


@functools.cache
def git_commit() -> str | None:
    """The commit of the source tree, when it is a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=project_root(),
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A nested config as dotted names to strings (MLflow params)."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{name}."))
        else:
            flat[name] = "null" if value is None else str(value)[:PARAM_VALUE_LIMIT]
    return flat


def start_run(client, experiment_id: str, run_name: str | None, tags: Mapping[str, str]) -> str:
    """Create a RUNNING run and return its id."""
    run = client.create_run(experiment_id, run_name=run_name, tags=dict(tags))
    return run.info.run_id


def write_run(
    client,
    run_id: str,
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    curves: Mapping[str, Iterable[tuple[int, float]]],
    tags: Mapping[str, str],
) -> None:
    """Everything a run logs, in one ``log_batch`` (MLflow splits it into its size limits)."""
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000)
    points = [Metric(k, float(v), now, 0) for k, v in metrics.items() if math.isfinite(float(v))]
    for name, curve in curves.items():
        points.extend(Metric(name, float(v), now, int(step)) for step, v in curve)
    client.log_batch(
        run_id,
        metrics=points,
        params=[Param(k, v) for k, v in params.items()],
        tags=[RunTag(k, str(v)) for k, v in tags.items()],
    )


def end_run(client, run_id: str, status: str = "FINISHED") -> None:
    """Close a run with ``status`` (FINISHED, FAILED or KILLED)."""
    client.set_terminated(run_id, status=status)


def fail_run(client, run_id: str, error: BaseException | str) -> None:
    """Close a run FAILED (KILLED on an interrupt), keeping the error in the tag ``error``."""
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    message = message.strip()[:PARAM_VALUE_LIMIT]
    status = "KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED"
    try:
        client.set_tag(run_id, "error", message)
    finally:
        client.set_terminated(run_id, status=status)


def write_payload(client, experiment_id: str, payload: Mapping[str, Any]) -> str:
    """Create, write and close a run measured elsewhere (``runner.execute_deferred``)."""
    run_id = start_run(client, experiment_id, payload["run_name"], payload["tags"])
    try:
        write_run(client, run_id, payload["params"], payload["metrics"], payload["curves"], {})
    finally:
        if payload["status"] == "FINISHED":
            end_run(client, run_id, "FINISHED")
        else:
            fail_run(client, run_id, str(payload.get("error") or ""))
    return run_id
