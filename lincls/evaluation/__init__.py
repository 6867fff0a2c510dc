"""A config's learner and dataset → a ``RunOutcome``: fit in order(s), measure, bound. No MLflow.

``prepare`` builds and checks everything a config names (``lincls.registry``) and what the
learner would refuse of the data, so bad input is found before any run exists. ``measure`` is
``prepare`` then ``fit_and_evaluate``: the metrics, curves and tags a run logs, as plain dicts.

The package's other modules: ``measures`` (the record, curves and bounds as metrics and tags),
``hyperplane`` (the learned hyperplane's margins) and ``slack`` (Novikoff's proof, factor by
factor).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone

from lincls import bounds as bounds_mod
from lincls.config.run import RunConfig
from lincls.data import Dataset
from lincls.errors import LinclsInputError, check_fits
from lincls.evaluation import measures
from lincls.evaluation.hyperplane import hyperplane_metrics
from lincls.games import Game
from lincls.geometry import Certificate, row_norms
from lincls.geometry.certificates import certificate_of, certificates_of, primary
from lincls.learners._base import OnlineBinaryClassifier, binary_classes, check_finite
from lincls.learners._kinds import is_online_binary, is_online_multiclass, takes_multiclass
from lincls.orders import fit_in_order
from lincls.paths import default_cache_dir, given_tracking_uri
from lincls.registry import build_dataset, build_learner, prefixed


@dataclass
class RunOutcome:
    """What a run measured and where it went."""

    run_id: str | None
    metrics: dict[str, float]
    tags: dict[str, str]
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    learner: Any = None
    dataset: Dataset | None = None
    # What the data add to the config's params (e.g. a CSV's column map), and text artifacts by
    # file name (the column map as JSON, the learned hyperplane's margin histogram).
    params: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunPlan:
    """How a run presents its data and finds certificates (the top-level config keys).

    ``order`` and ``orders``: ``lincls.orders``; ``seed`` seeds the orderings. ``svm``: also
    certify with SVMs (``lincls.geometry.certificates``), cached in ``cache_dir`` (None: no cache).
    ``best``: also evaluate each bound at its best comparator (``lincls.geometry.comparators``),
    with or without the SVMs.
    """

    order: str = "fixed"
    orders: int = 1
    seed: int = 0
    svm: bool = True
    cache_dir: str | None = None
    best: bool = True


def plan_of(config: RunConfig | Mapping[str, Any]) -> RunPlan:
    """The ``RunPlan`` of a config (a plain one is checked first: ``RunConfig.of``); the cache
    sits beside the tracking store unless ``certificates.cache_dir`` says where."""
    config = RunConfig.of(config)
    order = config.order
    if order == "fixed" and config.learner.get("shuffle"):
        order = "shuffled"  # a learner asked to shuffle: the shuffled order, seeded by the run
    certificates = config.certificates
    cache_dir = certificates.cache_dir
    if cache_dir is None:  # beside the store, whose directory the store's own check covers
        cache_dir = default_cache_dir(config.tracking.uri)
    return RunPlan(
        order, config.orders, config.seed, certificates.svm, str(cache_dir), certificates.best
    )


def prepare(config: RunConfig | Mapping[str, Any], dataset: Dataset | Game | None = None):
    """The learner and dataset of a config, every value checked: (learner, dataset).

    The run's own values are checked by ``RunConfig.from_container`` (a plain config is made
    one here); then what the learner would refuse of the data (e.g. Winnow: X < 0), and what
    would not fit in memory (a learner's storage for the data's width, the orderings' records, a
    game's examples), all before a run exists. ``dataset``: the config's, built already (a
    sweep's check builds one per distinct dataset).
    """
    config = RunConfig.of(config)
    learner = build_learner(config.learner, config.passes, config.seed)
    if dataset is None:
        dataset = build_dataset(config.dataset)
    if isinstance(dataset, Game):  # its data exist once it is played against the learner
        _check_game(plan_of(config), dataset)
        dataset.check(learner, config.passes)
        return learner, dataset
    if not takes_multiclass(learner):
        prefixed(
            "dataset", lambda: dataset.shared("binary classes", lambda: binary_classes(dataset.y))
        )
    if getattr(learner, "_validate_X_y", None) is not None:
        # what the learner refuses of its own parameters is learner.*
        prefixed("dataset", lambda: _validated(learner, dataset), learner)
    _check_orderings(config.orders, dataset)
    given_tracking_uri(config.tracking.uri)  # a bad tracking.uri is bad input of the run's
    return learner, dataset


def _validated(learner, dataset: Dataset) -> None:
    """The learner's check of the data (``_validate_X_y``, as ``fit`` starts it). The base
    class's looks at the data alone (their layout, X finite) and the class's tags, so it is
    made once per sealed dataset and class: a sweep's check of a million learner values asks
    it a million times."""
    cls = type(learner)
    if (
        cls._validate_X_y is OnlineBinaryClassifier._validate_X_y
        and cls._validate_layout is OnlineBinaryClassifier._validate_layout
    ):

        def check() -> bool:
            learner._validate_X_y(dataset.X, dataset.y, reset=True)
            return True

        dataset.shared(("the data's layout checked", cls), check)
        learner.n_features_in_ = dataset.X.shape[1]  # what the check sets, met or kept
        return
    learner._validate_X_y(dataset.X, dataset.y, reset=True)


# What one ordering of a run keeps until its bounds are evaluated: its fitted learner, its
# presentations and mistake record, its bounds' facts. Measured with tracemalloc over 100
# orderings: 24-60 bytes a training row (PA the least; ARoW's d² covariance and a support set
# come on top), so these are the least an ordering takes.
ORDERING_ROW_BYTES = 24
ORDERING_BYTES = 4096


def _check_orderings(orders: int, dataset: Dataset) -> None:
    """Refuse more orderings than the memory available can hold."""
    if orders == 1:
        return
    rows, columns = dataset.X.shape
    each = ORDERING_ROW_BYTES * rows + 8 * columns + ORDERING_BYTES
    what = f"an ordering of {rows} rows × {columns} columns (its learner, presentations, record)"
    check_fits("orders.permutations", orders, each=each, what=what)


def _check_game(plan: RunPlan, game: Game) -> None:
    if plan.order != "fixed" or plan.orders != 1:
        raise LinclsInputError(
            "order", f"the {game.name.replace('_', ' ')} decides the order itself: it needs "
            "order=fixed, orders=1")  # fmt: skip


def measure(config: RunConfig | Mapping[str, Any]) -> RunOutcome:
    """Build, fit and evaluate one config (a plain one checked: ``RunConfig.of``), without
    touching MLflow."""
    config = RunConfig.of(config)
    learner, dataset = prepare(config)
    return fit_and_evaluate(learner, dataset, plan_of(config))


def _binary_online(learner) -> bool:
    # a multiclass learner a game has fitted has a bias_feature_ too: it is no binary one
    if is_online_multiclass(learner):
        return False
    return hasattr(learner, "bias_feature_") or is_online_binary(learner)


def _fit_orderings(learner, dataset: Dataset, plan: RunPlan, online: bool, adversary):
    """The learner and its clones fitted once per ordering: (models, presentations, seconds)."""
    models = [learner] + [clone(learner) for _ in range(plan.orders - 1)]
    presentations: list[np.ndarray | None] = []
    seconds = 0.0
    for k, model in enumerate(models):
        start = time.perf_counter()
        if online:
            presentations.append(
                prefixed(
                    "dataset",
                    lambda m=model, k=k: fit_in_order(
                        m, dataset.X, dataset.y, plan.order, k, plan.seed, adversary
                    ),
                    model,
                )
            )
        else:
            prefixed("dataset", lambda m=model: m.fit(dataset.X, dataset.y), model)
            presentations.append(None)
        seconds += time.perf_counter() - start
    return models, presentations, seconds


def fit_and_evaluate(learner, dataset: Dataset, plan: RunPlan | None = None) -> RunOutcome:
    """Fit ``learner`` on ``dataset``; its record, accuracies and the bounds that apply.

    With ``plan.orders`` > 1 the learner is fitted once per ordering (clones): ``mistakes`` is
    their mean, ``fit_seconds`` their total; accuracies and curves are the first ordering's. Each
    bound is evaluated per ordering and logged at the ordering that comes closest to breaking it
    (``measures.bound_metrics``). Without a plan: the fixed order, no SVM certificates and no
    best comparators.
    """
    plan = plan or RunPlan(svm=False, best=False)
    played = None
    if isinstance(dataset, Game):  # the learner is fitted as the game is played
        _check_game(plan, dataset)
        start = time.perf_counter()
        game = dataset
        dataset, shown = prefixed("dataset", lambda: game.play(learner, learner.max_passes))
        played = ([learner], [shown], time.perf_counter() - start)
    online = _binary_online(learner)
    certs: list[Certificate] = []
    separable = None
    if online:
        prefixed("dataset", lambda: check_finite(dataset.X))  # before any SVM sees the data
        certs, separable = certificates_of(dataset, learner, plan.svm, plan.cache_dir)
    adversary, generator = primary(certs), None
    if not online and dataset.U is not None:  # a multiclass learner's adversary reads U
        adversary = generator = certificate_of(dataset, learner)
    ordered = online or hasattr(learner, "_one_pass")  # the multiclass learners take orders too
    models, presentations, fit_seconds = played or _fit_orderings(
        learner, dataset, plan, ordered, adversary
    )

    metrics: dict[str, float] = {"fit_seconds": fit_seconds}
    tags: dict[str, str] = {"order": plan.order}
    curves: measures.Curves = {}
    metrics["train_accuracy"] = measures.accuracy(learner, dataset.X, dataset.y)
    if dataset.X_test.shape[0]:
        metrics["test_accuracy"] = measures.accuracy(learner, dataset.X_test, dataset.y_test)
        if hasattr(learner, "test_measures"):  # a learner's own test measures (FS99's curves)
            staged_metrics, staged_curves = learner.test_measures(dataset.X_test, dataset.y_test)
            metrics.update(staged_metrics)
            curves.update(staged_curves)
    metrics.update(measures.weight_metrics(learner, dataset))

    known = dataset.u is not None or dataset.U is not None
    if generator is None:  # measured once: the adversary's is the run's
        generator = certificate_of(dataset, learner) if known else None
    certificate = generator if known else primary(certs)
    metrics["radius"] = dataset.radius
    if certificate is not None:
        metrics["margin"] = certificate.margin
        tags["lincls.certificate"] = certificate.source
    cert_metrics, cert_tags = measures.certificate_metrics(certs)
    metrics.update(cert_metrics)
    tags.update(cert_tags)
    if separable is not None:
        metrics["separable"] = float(separable)

    if hasattr(learner, "mistakes_"):
        record, curves = measures.record_metrics(models)
        metrics.update(record)
        sq_norms = row_norms(dataset.X) ** 2 if online else None
        facts = [
            bounds_mod.RunFacts(
                learner=model,
                radius=dataset.radius,
                certificate=certificate,
                certificates=tuple(certs) or ((certificate,) if certificate else ()),
                sq_norms=sq_norms,
                presentations=shown,
                n_train=dataset.X.shape[0],
                # with certificates.best on, each bound also finds its best comparator
                X=dataset.X if plan.best else None,
                y=dataset.y,
                data_key=dataset.fingerprint,
                cache_dir=plan.cache_dir,
            )
            for model, shown in zip(models, presentations, strict=True)
        ]
        evaluations = [bounds_mod.evaluate(f) for f in facts]
        mistakes = np.array([m.mistakes_ for m in models], dtype=np.float64)
        test_error = 1.0 - metrics["test_accuracy"] if "test_accuracy" in metrics else None
        bound_values, bound_tags = measures.bound_metrics(evaluations, mistakes, test_error)
        metrics.update(bound_values)
        tags.update(bound_tags)
        slack, slack_tags, slack_curves = measures.slack_metrics(
            learner, dataset, evaluations[0], tuple(certs) or (certificate,), facts[0]
        )
        metrics.update(slack)
        tags.update(slack_tags)
        curves.update(slack_curves)
        curves.update(measures.companion_curves(curves, metrics))
        if not evaluations[0].values:
            tags["bounds.none"] = getattr(learner, "no_bound_reason", None) or (
                "no mistake bound applies to this run (see bounds.skipped)"
            )
    else:
        tags["bounds.none"] = getattr(learner, "no_bound_reason", None) or (
            "not an online learner: no mistake bound applies"
        )
    if hasattr(learner, "log_likelihood_"):  # an iterative likelihood solver (MaxEnt)
        likelihood, likelihood_curves = measures.likelihood_metrics(learner)
        metrics.update(likelihood)
        curves.update(likelihood_curves)
    margins, margin_tags, artifacts = hyperplane_metrics(learner, dataset.X, dataset.y, certs)
    metrics.update(margins)
    tags.update(margin_tags)
    params, column_artifacts = measures.column_map(dataset)
    artifacts.update(column_artifacts)
    artifacts.update(dataset.params.get("artifacts") or {})  # a searched instance's files
    tags["dataset.fingerprint"] = dataset.fingerprint
    return RunOutcome(None, metrics, tags, curves, learner, dataset, params, artifacts)
