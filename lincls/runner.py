"""One run: make the data, fit the learner, evaluate the bounds, write everything to MLflow.

``execute`` is what a Hydra job calls. Bad input is found before the run is created (so it leaves
nothing in the store) and raised as ``LinclsInputError`` naming the config field; a failure after
the run exists closes it FAILED with the error in a tag.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import lincls
from lincls import bounds as bounds_mod
from lincls import tracking
from lincls.data import (
    Dataset,
    load_csv,
    make_disjunction,
    make_multiclass,
    make_orthonormal,
    make_separable,
)
from lincls.errors import LinclsInputError, check_number
from lincls.geometry import Certificate, MulticlassCertificate, certify, certify_multiclass
from lincls.learners import (
    MIRA,
    AveragedPerceptron,
    BalancedWinnow,
    KernelPerceptron,
    LearningRatePerceptron,
    MarginPerceptron,
    MulticlassPerceptron,
    PassiveAggressive,
    Perceptron,
    VotedPerceptron,
    Winnow,
)
from lincls.learners._base import binary_classes

CURVE_POINTS = 200

LEARNERS: dict[str, type] = {
    "perceptron": Perceptron,
    "averaged_perceptron": AveragedPerceptron,
    "voted_perceptron": VotedPerceptron,
    "margin_perceptron": MarginPerceptron,
    "learning_rate_perceptron": LearningRatePerceptron,
    "passive_aggressive": PassiveAggressive,
    "kernel_perceptron": KernelPerceptron,
    "winnow": Winnow,
    "balanced_winnow": BalancedWinnow,
    "multiclass_perceptron": MulticlassPerceptron,
    "mira": MIRA,
}

DATASETS: dict[str, Callable[..., Dataset]] = {
    "separable": make_separable,
    "orthonormal": make_orthonormal,
    "disjunction": make_disjunction,
    "csv": load_csv,
    "multiclass": make_multiclass,
}


@dataclass
class RunOutcome:
    """What a run measured and where it went."""

    run_id: str | None
    metrics: dict[str, float]
    tags: dict[str, str]
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    learner: Any = None
    dataset: Dataset | None = None


def _prefixed(group: str, build: Callable[[], Any]) -> Any:
    """Run ``build``; re-raise a bad-input error with its field under ``group.``."""
    try:
        return build()
    except LinclsInputError as exc:
        raise LinclsInputError(f"{group}.{exc.field}", exc.problem) from None
    except TypeError as exc:  # an unknown keyword: a key the learner or generator does not take
        raise LinclsInputError(group, str(exc).split("(")[-1].rstrip(")") or str(exc)) from None


def _options(section: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in section.items() if k != "name"}


def build_learner(learner_cfg: Mapping[str, Any], passes: int, seed: int):
    """The estimator a learner config names, with its parameters checked."""
    name = learner_cfg.get("name")
    if name not in LEARNERS:
        raise LinclsInputError("learner.name", f"must be one of {sorted(LEARNERS)}, got {name!r}")
    cls = LEARNERS[name]

    def build():
        learner = cls(**_options(learner_cfg))
        known = learner.get_params()
        learner.set_params(
            **{k: v for k, v in (("max_passes", passes), ("random_state", seed)) if k in known}
        )
        if hasattr(learner, "_check_params"):
            learner._check_params()
        return learner

    return _prefixed("learner", build)


def build_dataset(dataset_cfg: Mapping[str, Any]) -> Dataset:
    """The dataset a dataset config names (generated, or read from a file)."""
    name = dataset_cfg.get("name")
    if name not in DATASETS:
        raise LinclsInputError("dataset.name", f"must be one of {sorted(DATASETS)}, got {name!r}")
    return _prefixed("dataset", lambda: DATASETS[name](**_options(dataset_cfg)))


def certificate_of(dataset: Dataset, learner) -> Certificate | MulticlassCertificate | None:
    """The certificate of the data as the learner labels it: the generator's (u, b) or U if known.

    A multiclass learner on binary data gets the multiclass form of (u, b): rows (−u, u)/√2,
    offsets (−b, b)/√2, multiclass margin √2·γ.
    """
    multiclass = learner.__sklearn_tags__().classifier_tags.multi_class
    if dataset.U is not None:
        if not multiclass:
            return None
        y_index = np.searchsorted(np.unique(dataset.y), dataset.y)
        return certify_multiclass(dataset.X, y_index, dataset.U, None, source="generator")
    if dataset.u is None:
        return None
    if multiclass:
        y_index = np.searchsorted(learner.classes_, dataset.y)
        U, b = np.vstack([-dataset.u, dataset.u]), np.array([-dataset.b, dataset.b])
        return certify_multiclass(dataset.X, y_index, U, b, source="generator")
    y_signed = np.where(dataset.y == learner.classes_[1], 1.0, -1.0)
    return certify(dataset.X, y_signed, dataset.u, dataset.b, source="generator")


def config_hash(config: Mapping[str, Any]) -> str:
    """A stable hash of a resolved config, tracking settings left out."""
    body = {k: v for k, v in config.items() if k != "tracking"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def prepare(config: Mapping[str, Any]):
    """The learner and dataset of a config, every value checked: (learner, dataset)."""
    check_number("passes", config.get("passes"), low=1, integer=True)
    check_number("seed", config.get("seed"), low=0, integer=True)
    learner = build_learner(config["learner"], int(config["passes"]), int(config["seed"]))
    dataset = build_dataset(config["dataset"])
    if not learner.__sklearn_tags__().classifier_tags.multi_class:
        _prefixed("dataset", lambda: binary_classes(dataset.y))
    return learner, dataset


def measure(config: Mapping[str, Any]) -> RunOutcome:
    """Build, fit and evaluate one config, without touching MLflow."""
    return fit_and_evaluate(*prepare(config))


def fit_and_evaluate(learner, dataset: Dataset) -> RunOutcome:
    """Fit ``learner`` on ``dataset``; its record, accuracies and the bounds that apply."""
    start = time.perf_counter()
    _prefixed("dataset", lambda: learner.fit(dataset.X, dataset.y))
    fit_seconds = time.perf_counter() - start

    metrics: dict[str, float] = {"fit_seconds": fit_seconds}
    tags: dict[str, str] = {}
    curves: dict[str, list[tuple[int, float]]] = {}
    metrics["train_accuracy"] = float(learner.score(dataset.X, dataset.y))
    if dataset.X_test.shape[0]:
        metrics["test_accuracy"] = float(learner.score(dataset.X_test, dataset.y_test))

    certificate = certificate_of(dataset, learner)
    metrics["radius"] = dataset.radius
    if certificate is not None:
        metrics["margin"] = certificate.margin
        tags["lincls.certificate"] = certificate.source

    if hasattr(learner, "mistakes_"):
        metrics.update(
            mistakes=learner.mistakes_,
            updates=learner.updates_,
            passes_run=learner.n_passes_,
            converged=float(learner.converged_),
        )
        curves["mistakes_per_pass"] = [
            (p + 1, float(m)) for p, m in enumerate(learner.mistakes_per_pass_)
        ]
        steps = tracking.log_spaced_steps(learner.n_steps_, CURVE_POINTS)
        cumulative = np.searchsorted(learner.mistake_steps_, steps, side="left")
        curves["cumulative_mistakes"] = [
            (int(s), float(c)) for s, c in zip(steps, cumulative, strict=True)
        ]

        facts = bounds_mod.RunFacts(learner=learner, radius=dataset.radius, certificate=certificate)
        evaluation = bounds_mod.evaluate(facts)
        violated = False
        for name, value in evaluation.values.items():
            metrics[f"bound.{name}"] = value
            metrics[f"bound_ratio.{name}"] = learner.mistakes_ / value
            violated |= not bounds_mod.holds(learner.mistakes_, value)
        if evaluation.tightest is not None:
            name, value = evaluation.tightest
            metrics["bound.tightest"] = value
            metrics["bound_ratio.tightest"] = learner.mistakes_ / value
            tags["bound.tightest"] = name
        tags["bound_violated"] = str(violated).lower()
        tags["bounds.skipped"] = "; ".join(f"{k}: {v}" for k, v in evaluation.skipped.items())
        if not evaluation.values:
            tags["bounds.none"] = "no mistake bound applies to this run (see bounds.skipped)"
    else:
        tags["bounds.none"] = "not an online learner: no mistake bound applies"
    tags["dataset.fingerprint"] = dataset.fingerprint
    return RunOutcome(None, metrics, tags, curves, learner, dataset)


def execute(config: Mapping[str, Any]) -> RunOutcome:
    """One run, logged: validate → create the MLflow run → fit and evaluate → one batched write."""
    learner, dataset = prepare(config)
    settings = config.get("tracking") or {}
    uri = tracking.resolve_tracking_uri(settings.get("uri"))
    client, experiment_id = tracking.open_experiment(
        uri, settings.get("experiment") or tracking.DEFAULT_EXPERIMENT
    )
    tags = {
        "lincls.version": lincls.__version__,
        "lincls.config_hash": config_hash(config),
        "learner": str(config["learner"].get("name")),
        "dataset": str(config["dataset"].get("name")),
    }
    if tracking.git_commit():
        tags["mlflow.source.git.commit"] = tracking.git_commit()
    run_name = settings.get("run_name") or f"{tags['learner']}-{tags['dataset']}"
    run_id = tracking.start_run(client, experiment_id, run_name, tags)
    try:
        outcome = fit_and_evaluate(learner, dataset)
        tracking.write_run(
            client, run_id, tracking.flatten(config), outcome.metrics, outcome.curves, outcome.tags
        )
        tracking.end_run(client, run_id, "FINISHED")
    except BaseException as exc:
        tracking.fail_run(client, run_id, exc)
        raise
    outcome.run_id = run_id
    outcome.tags.update(tags)
    return outcome
