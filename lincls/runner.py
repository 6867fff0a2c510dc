"""One run, logged: validate → create the MLflow run → evaluate → one batched write.

``execute`` is what a Hydra job calls. Bad input is found before the run is created (so it leaves
nothing in the store) and raised as ``LinclsInputError`` naming the config field; a failure after
the run exists closes it FAILED with the error in a tag. ``execute_deferred`` measures a run for
another process to write (``tracking.write_payload``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import lincls.search  # noqa: F401  (registers dataset=search, whose game is a search)
from lincls import tracking
from lincls.config.run import RunConfig
from lincls.data.dataset import Dataset
from lincls.errors import LinclsInputError
from lincls.evaluation import RunOutcome, fit_and_evaluate, plan_of, prepare
from lincls.figures import with_figure
from lincls.tracking.describe import describe_run
from lincls.tracking.record import written
from lincls.tracking.tags import NOTE_TAG, run_name_of, run_tags
from lincls.tracking.view import shown_tags


def dataset_input(config: RunConfig, outcome: RunOutcome) -> dict[str, str] | None:
    """The run's data as an MLflow dataset input: named, digest = the dataset fingerprint."""
    dataset = outcome.dataset
    if dataset is None:
        return None
    settings = {k: v for k, v in config.dataset.items() if v is not None}
    shape = f"{dataset.X.shape[0]}×{dataset.X.shape[1]}"
    return {
        "name": f"{dataset.name} {shape}",
        "digest": dataset.fingerprint,
        "source": json.dumps(settings, sort_keys=True, default=str),
        "profile": json.dumps({"rows": dataset.X.shape[0], "features": dataset.X.shape[1]}),
    }


def _describe(config: RunConfig, outcome: RunOutcome) -> None:
    """The run's description and the rounded numbers the runs table's view shows. (Its figure is
    drawn from its record when the UI asks for it: ``tracking.record.recorded_artifacts``.)"""
    outcome.tags[NOTE_TAG] = describe_run(config, outcome.metrics, outcome.tags)
    outcome.tags.update(shown_tags(outcome.metrics))


class LastData:
    """The data of this process's last run and the settings that made them: a sweep's runs of
    one dataset (its learners, learning rates, passes) build it once a process. Generated or read
    data only: a game is played anew by each run. Nothing changes a dataset once it is built
    (``test_sweep_shares_data``: every learner in one sweep, each run equal to its run alone)."""

    def __init__(self) -> None:
        self.settings: str | None = None
        self.data: Dataset | None = None

    @staticmethod
    def _settings(config: RunConfig) -> str:
        return json.dumps(dict(config.dataset), sort_keys=True, default=repr)

    def get(self, config: RunConfig) -> Dataset | None:
        """The data of ``config``'s dataset, if the last run built them."""
        return self.data if self.settings == self._settings(config) else None

    def keep(self, config: RunConfig, data: Any) -> None:
        """Keep ``data``, built for ``config``'s dataset (a game's are not kept)."""
        kept = isinstance(data, Dataset)
        self.settings, self.data = (self._settings(config), data.seal()) if kept else (None, None)


def execute(
    config: RunConfig | Mapping[str, Any],
    extra_tags: Mapping[str, str] | None = None,
    shared: LastData | None = None,
) -> RunOutcome:
    """One run, logged: validate → create the MLflow run → fit and evaluate → one batched write.

    ``config``: a ``RunConfig`` (a plain config is checked and made one: ``RunConfig.of``).
    ``extra_tags`` go on the run from its creation (a sweep's parent id, study, overrides).
    ``shared``: the data of the process's last run, used when its dataset is this one's.
    """
    config = RunConfig.of(config)
    learner, dataset = _prepared(config, shared)
    plan = plan_of(config)
    settings = config.tracking
    client, experiment_id = tracking.open_experiment(
        tracking.resolve_tracking_uri(settings.uri),
        settings.experiment or tracking.DEFAULT_EXPERIMENT,
        settings.retry_seconds,
    )
    tags = run_tags(config, extra_tags)
    run_id = tracking.start_run(client, experiment_id, run_name_of(config, tags), tags)
    try:
        outcome = fit_and_evaluate(learner, dataset, plan)
        _describe(config, outcome)
        outcome.tags[NOTE_TAG] = with_figure(outcome.tags[NOTE_TAG], run_id)
        stored = written(outcome.metrics, outcome.tags, outcome.curves, outcome.artifacts)
        tracking.log_texts(client, run_id, stored.artifacts)
        tracking.finish_run(
            client, run_id, {**tracking.flatten(config.raw), **outcome.params}, stored.metrics,
            {}, stored.tags, dataset_input(config, outcome),
        )  # fmt: skip
    except tracking.StoreError:
        raise  # the store is not answering: writing the failure would wait out the budget again
    except BaseException as exc:
        try:  # a failed run still says what it ran: its config as params
            params = tracking.flatten(config.raw)
            tracking.finish_run(client, run_id, params, {}, {}, {}, status=None)
        except Exception:  # the params were written already (the failure came after)
            pass
        tracking.fail_run(client, run_id, exc)
        exc.lincls_run_id = run_id  # the caller can tell the run exists (and is FAILED)
        raise
    outcome.run_id = run_id
    outcome.tags.update(tags)
    return outcome


def _prepared(config: RunConfig, shared: LastData | None) -> tuple[Any, Any]:
    """``prepare`` of ``config``, on the data ``shared`` kept when they are its dataset's."""
    learner, dataset = prepare(config, None if shared is None else shared.get(config))
    if shared is not None:
        shared.keep(config, dataset)
    return learner, dataset


def execute_deferred(
    config: RunConfig | Mapping[str, Any],
    extra_tags: Mapping[str, str] | None = None,
    experiment_id: str | None = None,
    shared: LastData | None = None,
    opened: bool = True,
) -> dict[str, Any]:
    """One run measured but not written: what ``tracking.write_payload`` needs to log it.

    A process pool's workers use it so that one process writes the runs' metrics: SQLite
    serialises writers. A run measured without error is created here, though, with its tags,
    dataset input and text artifacts (``open_measured_run``): that third of a run's writes then
    overlaps the launching process's writing of the runs before it (a WAL store lets both write).
    A plain ``config`` is checked here, its refusal a FAILED payload like any failure.
    ``opened=False``: nothing is written here (a chunk's runs are written at once:
    ``tracking.measured``); the payload keeps when it started and ended (ms).
    """
    started = int(time.time() * 1000)
    tags = run_tags(config, extra_tags)
    raw = config.raw if isinstance(config, RunConfig) else config
    payload: dict[str, Any] = {
        "run_name": run_name_of(config, tags),
        "tags": tags,
        "params": tracking.flatten(raw),
        "metrics": {},
        "curves": {},
        "status": "FINISHED",
        "error": None,
        "start_time": started,
    }
    try:
        config = RunConfig.of(config)
        learner, dataset = _prepared(config, shared)
        outcome = fit_and_evaluate(learner, dataset, plan_of(config))
    except Exception as exc:
        payload.update(status="FAILED", error=f"{type(exc).__name__}: {exc}")
        payload["input_error"] = isinstance(exc, LinclsInputError)
        payload["end_time"] = int(time.time() * 1000)
        return payload
    _describe(config, outcome)
    payload.update(metrics=outcome.metrics, curves=outcome.curves, artifacts=outcome.artifacts)
    payload["params"].update(outcome.params)
    payload["tags"] = {**tags, **outcome.tags}
    stored = written(outcome.metrics, outcome.tags, outcome.curves, outcome.artifacts)
    stored.tags = {**tags, **stored.tags}
    payload["stored"] = stored  # what the store gets of it (``tracking.write_payload``)
    payload["dataset_input"] = dataset_input(config, outcome)
    payload["end_time"] = int(time.time() * 1000)
    if opened:
        open_measured_run(config, payload, experiment_id)
    return payload


def open_measured_run(
    config: RunConfig, payload: dict[str, Any], experiment_id: str | None = None
) -> None:
    """Create the run of a measured ``payload`` and write its dataset input and text artifacts;
    ``payload`` gets ``run_id`` (and ``inputs_written``) for ``tracking.write_payload`` to finish
    it. A store that fails here leaves the rest to the launching process, which tries again.
    ``experiment_id``: the sweep's, as the launching process opened it."""
    settings = config.tracking
    try:
        client, experiment_id = tracking.open_experiment(
            tracking.resolve_tracking_uri(settings.uri),
            settings.experiment or tracking.DEFAULT_EXPERIMENT,
            settings.retry_seconds,
            experiment_id,
        )
        stored = tracking.stored_of(payload)
        payload["run_id"] = tracking.start_run(
            client, experiment_id, payload["run_name"], stored.tags
        )
        if payload.get("dataset_input"):
            tracking.log_dataset_input(client, payload["run_id"], payload["dataset_input"])
        tracking.log_texts(client, payload["run_id"], stored.artifacts)
    except Exception:  # the launching process writes what is missing, or fails the run
        return
    payload["inputs_written"] = True


def refused_run(
    client, experiment_id: str, config: Mapping[str, Any], tags: Mapping[str, str], error
) -> str:
    """A FAILED run for a config refused before it ran (the plain config, as it was written:
    ``RunConfig.unchecked``): its params and the error."""
    config = RunConfig.unchecked(config)
    tags = run_tags(config, tags)
    run_id = tracking.start_run(client, experiment_id, run_name_of(config, tags), tags)
    tracking.finish_run(client, run_id, tracking.flatten(config.raw), {}, {}, {}, status=None)
    tracking.fail_run(client, run_id, error)
    return run_id
