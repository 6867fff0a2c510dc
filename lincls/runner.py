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
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model._base import LinearClassifierMixin

import lincls
from lincls import bounds as bounds_mod
from lincls import tracking
from lincls.certificates import CertificateCache, svm_certificates
from lincls.data import (
    Dataset,
    load_breast_cancer,
    load_csv,
    load_digits,
    load_iris,
    load_svmlight,
    load_wine,
    make_disjunction,
    make_far_points,
    make_multiclass,
    make_noisy,
    make_orthonormal,
    make_plane,
    make_separable,
)
from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.geometry import (
    Certificate,
    MulticlassCertificate,
    certify,
    certify_multiclass,
    hinge_deficit,
    row_norms,
)
from lincls.learners import (
    MIRA,
    Adaline,
    AveragedPerceptron,
    BalancedWinnow,
    BatchPerceptron,
    KernelPerceptron,
    LearningRatePerceptron,
    LeastSquaresClassifier,
    MarginPerceptron,
    MaxEnt,
    MulticlassPerceptron,
    NaiveBayesLinear,
    PassiveAggressive,
    Perceptron,
    VotedPerceptron,
    Winnow,
)
from lincls.learners._base import binary_classes, check_finite
from lincls.orders import ORDERS, fit_in_order
from lincls.sweeps import ROLE_TAG, STUDY_TAG, process_tags, study_of

CURVE_POINTS = 200
WEIGHTS_MAX_FEATURES = 3  # weights of low-dimensional runs are logged, for pictures

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
    "naive_bayes_linear": NaiveBayesLinear,
    "maxent": MaxEnt,
    "least_squares": LeastSquaresClassifier,
    "adaline": Adaline,
    "batch_perceptron": BatchPerceptron,
}

DATASETS: dict[str, Callable[..., Dataset]] = {
    "separable": make_separable,
    "orthonormal": make_orthonormal,
    "disjunction": make_disjunction,
    "csv": load_csv,
    "multiclass": make_multiclass,
    "noisy": make_noisy,
    "plane": make_plane,
    "breast_cancer": load_breast_cancer,
    "digits": load_digits,
    "iris": load_iris,
    "wine": load_wine,
    "svmlight": load_svmlight,
    "far_points": make_far_points,
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


def _prefixed(group: str, build: Callable[[], Any], learner=None) -> Any:
    """Run ``build``; re-raise a bad-input error with its field under ``group.``.

    While fitting ``learner``, an error about one of its parameters (e.g. ``max_vectors``
    exceeded) goes under ``learner.`` instead.
    """
    try:
        return build()
    except LinclsInputError as exc:
        owner = group
        if learner is not None and exc.field.split(".")[0] in learner.get_params(deep=False):
            owner = "learner"
        raise LinclsInputError(f"{owner}.{exc.field}", exc.problem) from None
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


@dataclass(frozen=True)
class RunPlan:
    """How a run presents its data and finds certificates (the top-level config keys).

    ``order`` and ``orders``: ``lincls.orders``; ``seed`` seeds the orderings. ``svm``: also
    certify with SVMs (``lincls.certificates``), cached in ``cache_dir`` (None: no cache).
    """

    order: str = "fixed"
    orders: int = 1
    seed: int = 0
    svm: bool = True
    cache_dir: str | None = None


def plan_of(config: Mapping[str, Any]) -> RunPlan:
    """The ``RunPlan`` of a config, checked; the cache sits beside the tracking store."""
    order = config.get("order", "fixed")
    check_choice("order", order, ORDERS)
    orders = config.get("orders", 1)
    check_number("orders", orders, low=1, integer=True)
    if order == "fixed" and config["learner"].get("shuffle"):
        order = "shuffled"  # a learner asked to shuffle: the shuffled order, seeded by the run
    settings = config.get("certificates") or {}
    svm = settings.get("svm", True)
    if not isinstance(svm, bool):
        raise LinclsInputError("certificates.svm", f"must be true or false, got {svm!r}")
    cache_dir = settings.get("cache_dir")
    if cache_dir is None:
        uri = tracking.resolve_tracking_uri((config.get("tracking") or {}).get("uri"))
        root = Path(uri[len("sqlite:///") :]).parent if uri.startswith("sqlite:///") else None
        cache_dir = str((root or tracking.project_root() / "results") / "certificates")
    return RunPlan(str(order), int(orders), int(config.get("seed", 0)), svm, str(cache_dir))


def certificates_of(
    dataset: Dataset, learner, plan: RunPlan
) -> tuple[list[Certificate], bool | None]:
    """Every certificate of the data as the (fitted or not) binary learner labels it.

    The generator's (u, b) when known, then the SVMs' (cached per dataset fingerprint and
    positive class): ([certificates], separable?), separable None when nothing decides it.
    """
    classes = getattr(learner, "classes_", None)
    if classes is None:
        classes = binary_classes(dataset.y)
    y_signed = np.where(dataset.y == classes[1], 1.0, -1.0)
    certs: list[Certificate] = []
    separable: bool | None = None
    if dataset.u is not None:
        certs.append(certify(dataset.X, y_signed, dataset.u, dataset.b, source="generator"))
        separable = True if certs[0].separates else None
    if plan.svm and dataset.X.shape[0]:
        cache = CertificateCache(plan.cache_dir) if plan.cache_dir else None
        key = f"{dataset.fingerprint}-{hashlib.sha256(repr(classes[1]).encode()).hexdigest()[:8]}"
        homogeneous = getattr(learner, "bias", "feature") == "none"
        found, svm_separable = svm_certificates(
            dataset.X, y_signed, homogeneous=homogeneous, fingerprint=key, cache=cache
        )
        certs.extend(found)
        separable = svm_separable if separable is None or svm_separable else separable
    return certs, separable


def _certificate_metrics(certs: list[Certificate]) -> tuple[dict[str, float], dict[str, str]]:
    """Each certificate's γ (its margin), R and the deficit D at the γ Freund–Schapire picks."""
    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    for cert in certs:
        prefix = f"certificate.{cert.source}"
        if cert.separates:
            gamma, deficit = cert.margin, 0.0
        else:
            _, gamma, deficit = bounds_mod.freund_schapire_grid(
                cert.radius, cert.margins, np.ones(cert.margins.shape[0])
            )
            deficit = hinge_deficit(cert.margins, gamma)
        metrics.update({f"{prefix}.margin": cert.margin, f"{prefix}.radius": cert.radius,
                        f"{prefix}.gamma": gamma, f"{prefix}.deficit": deficit})  # fmt: skip
        tags[prefix] = "separates" if cert.separates else "does not separate"
    return metrics, tags


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
    validate = getattr(learner, "_validate_X_y", None)
    if validate is not None:  # what the learner would refuse (e.g. Winnow: X < 0), before a run
        _prefixed("dataset", lambda: validate(dataset.X, dataset.y, reset=True))
    # The order and certificate settings travel with the learner to ``fit_and_evaluate``.
    learner.lincls_run_plan = plan_of(config)
    return learner, dataset


def measure(config: Mapping[str, Any]) -> RunOutcome:
    """Build, fit and evaluate one config, without touching MLflow."""
    return fit_and_evaluate(*prepare(config))


def _binary_online(learner) -> bool:
    return hasattr(learner, "bias_feature_") or (
        hasattr(learner, "_one_pass") and not learner.__sklearn_tags__().classifier_tags.multi_class
    )


def fit_and_evaluate(learner, dataset: Dataset, plan: RunPlan | None = None) -> RunOutcome:
    """Fit ``learner`` on ``dataset``; its record, accuracies and the bounds that apply.

    With ``plan.orders`` > 1 the learner is fitted once per ordering (clones): ``mistakes`` is
    their mean (with ``mistakes_std``, ``_min``, ``_max``, as LIBOL reports), ``fit_seconds``
    their total; accuracies and curves are the first ordering's. Each bound is
    evaluated per ordering, and the ordering that comes closest to breaking it is logged: a
    mistake bound is a worst case over orders, so the worst ordering is its test
    (``bound_ratio.X`` = max over orderings of mistakes / bound; an order-free bound such as
    Novikoff's is then simply the largest mistake count against it).
    """
    plan = plan or getattr(learner, "lincls_run_plan", None) or RunPlan(svm=False)
    online = _binary_online(learner)
    certs: list[Certificate] = []
    separable = None
    if online:
        _prefixed("dataset", lambda: check_finite(dataset.X))  # before any SVM sees the data
        certs, separable = certificates_of(dataset, learner, plan)

    learners = [learner] + [clone(learner) for _ in range(plan.orders - 1)]
    presentations: list[np.ndarray | None] = []
    fit_seconds = 0.0
    adversary_cert = _primary(certs)
    for k, model in enumerate(learners):
        start = time.perf_counter()
        if online:
            presentations.append(
                _prefixed(
                    "dataset",
                    lambda m=model, k=k: fit_in_order(
                        m, dataset.X, dataset.y, plan.order, k, plan.seed, adversary_cert
                    ),
                    model,
                )
            )
        else:
            _prefixed("dataset", lambda m=model: m.fit(dataset.X, dataset.y), model)
            presentations.append(None)
        fit_seconds += time.perf_counter() - start

    metrics: dict[str, float] = {"fit_seconds": fit_seconds}
    tags: dict[str, str] = {"order": plan.order}
    curves: dict[str, list[tuple[int, float]]] = {}
    metrics["train_accuracy"] = float(learner.score(dataset.X, dataset.y))
    if dataset.X_test.shape[0]:
        metrics["test_accuracy"] = float(learner.score(dataset.X_test, dataset.y_test))
    metrics.update(_weight_metrics(learner, dataset))

    known = dataset.u is not None or dataset.U is not None
    certificate = certificate_of(dataset, learner) if known else _primary(certs)
    metrics["radius"] = dataset.radius
    if certificate is not None:
        metrics["margin"] = certificate.margin
        tags["lincls.certificate"] = certificate.source
    cert_metrics, cert_tags = _certificate_metrics(certs)
    metrics.update(cert_metrics)
    tags.update(cert_tags)
    if separable is not None:
        metrics["separable"] = float(separable)

    if hasattr(learner, "mistakes_"):
        mistakes = np.array([m.mistakes_ for m in learners], dtype=np.float64)
        metrics.update(
            mistakes=float(mistakes.mean()),
            updates=float(np.mean([m.updates_ for m in learners])),
            passes_run=float(np.mean([m.n_passes_ for m in learners])),
            converged=float(np.mean([m.converged_ for m in learners])),
        )
        if plan.orders > 1:
            metrics.update(
                orders=float(plan.orders),
                mistakes_std=float(mistakes.std()),
                mistakes_min=float(mistakes.min()),
                mistakes_max=float(mistakes.max()),
            )
        curves["mistakes_per_pass"] = [
            (p + 1, float(m)) for p, m in enumerate(learner.mistakes_per_pass_)
        ]
        steps = tracking.log_spaced_steps(learner.n_steps_, CURVE_POINTS)
        cumulative = np.searchsorted(learner.mistake_steps_, steps, side="left")
        curves["cumulative_mistakes"] = [
            (int(s), float(c)) for s, c in zip(steps, cumulative, strict=True)
        ]
        per_batch = getattr(learner, "mistakes_per_batch_", None)
        if per_batch is not None:  # a mini-batch learner: its batches and each one's mistakes
            metrics["batches"] = float(np.mean([m.n_batches_ for m in learners]))
            batches = tracking.log_spaced_steps(per_batch.shape[0], CURVE_POINTS)
            curves["mistakes_per_batch"] = [(int(s), float(per_batch[s - 1])) for s in batches]
        sq_norms = row_norms(dataset.X) ** 2 if online else None
        evaluations = [
            bounds_mod.evaluate(
                bounds_mod.RunFacts(
                    learner=model,
                    radius=dataset.radius,
                    certificate=certificate,
                    certificates=tuple(certs) or ((certificate,) if certificate else ()),
                    sq_norms=sq_norms,
                    presentations=shown,
                    n_train=dataset.X.shape[0],
                )
            )
            for model, shown in zip(learners, presentations, strict=True)
        ]
        violated = _log_bounds(evaluations, mistakes, metrics, tags)
        test_error = 1.0 - metrics["test_accuracy"] if "test_accuracy" in metrics else None
        for name, value in evaluations[0].test_error.items():
            metrics[f"test_error_bound.{name}"] = value
            tags[f"test_error_bound.{name}.certificate"] = evaluations[0].sources[name]
            if test_error is not None:
                metrics[f"test_error_bound_ratio.{name}"] = test_error / value
        tags["bound_violated"] = str(violated).lower()
        skipped = evaluations[0].skipped
        reasons = set(skipped.values())
        if len(reasons) == 1 and not evaluations[0].values:  # one reason rules out every bound
            tags["bounds.skipped"] = f"every bound: {reasons.pop()}"
        else:
            tags["bounds.skipped"] = "; ".join(f"{k}: {v}" for k, v in skipped.items())
        if not evaluations[0].values:
            tags["bounds.none"] = getattr(learner, "no_bound_reason", None) or (
                "no mistake bound applies to this run (see bounds.skipped)"
            )
    else:
        tags["bounds.none"] = getattr(learner, "no_bound_reason", None) or (
            "not an online learner: no mistake bound applies"
        )
    if hasattr(learner, "log_likelihood_"):  # an iterative likelihood solver (MaxEnt)
        history = learner.log_likelihood_
        metrics.update(
            log_likelihood=float(history[-1]),
            iterations=float(learner.n_iter_),
            converged=float(learner.converged_),
        )
        steps = np.r_[0, tracking.log_spaced_steps(learner.n_iter_, CURVE_POINTS)]
        curves["log_likelihood_per_iteration"] = [(int(s), float(history[s])) for s in steps]
    tags["dataset.fingerprint"] = dataset.fingerprint
    return RunOutcome(None, metrics, tags, curves, learner, dataset)


def _weight_metrics(learner, dataset: Dataset) -> dict[str, float]:
    """``weights.coef.<j>`` and ``weights.intercept`` of a binary learner scoring w·x + b, d ≤ 3.

    With so few features the weights are a handful of numbers, and with the data rebuilt from the
    run's params they draw the decision boundary (``experiments.report``).
    """
    coef = getattr(learner, "coef_", None)
    linear = type(learner).decision_function is LinearClassifierMixin.decision_function
    if coef is None or not linear or dataset.X.shape[1] > WEIGHTS_MAX_FEATURES:
        return {}
    if len(learner.classes_) != 2 or np.shape(coef) != (1, dataset.X.shape[1]):
        return {}
    weights = {f"weights.coef.{j}": float(w) for j, w in enumerate(np.ravel(coef))}
    weights["weights.intercept"] = float(np.ravel(learner.intercept_)[0])
    return weights


def _primary(certs: list[Certificate]) -> Certificate | None:
    """The separating certificate of largest margin, else the first one."""
    separating = [c for c in certs if c.separates]
    if separating:
        return max(separating, key=lambda c: c.margin)
    return certs[0] if certs else None


def _log_bounds(evaluations, mistakes: np.ndarray, metrics: dict, tags: dict) -> bool:
    """Log each mistake bound at the ordering closest to breaking it; whether any broke."""
    violated = False
    logged: dict[str, tuple[float, float]] = {}
    for name in evaluations[0].values:
        per_order = [
            (float(mistakes[k] / ev.values[name]), ev.values[name], k)
            for k, ev in enumerate(evaluations)
            if name in ev.values
        ]
        ratio, value, k = max(per_order)
        violated |= any(not bounds_mod.holds(mistakes[j], v) for _, v, j in per_order)
        logged[name] = (value, ratio)
        metrics[f"bound.{name}"] = value
        metrics[f"bound_ratio.{name}"] = ratio
        tags[f"bound.{name}.certificate"] = evaluations[k].sources[name]
        for key, detail in evaluations[k].details.get(name, {}).items():
            metrics[f"bound_param.{name}.{key}"] = detail
    if logged:
        name = min(logged, key=lambda n: logged[n][0])
        metrics["bound.tightest"], metrics["bound_ratio.tightest"] = logged[name]
        tags["bound.tightest"] = name
    return violated


def run_tags(config: Mapping[str, Any], extra_tags: Mapping[str, str] | None = None) -> dict:
    """The tags a run carries from its creation: version, config hash, names, study, writer."""
    tags = {
        "lincls.version": lincls.__version__,
        "lincls.config_hash": config_hash(config),
        "learner": str((config.get("learner") or {}).get("name")),
        "dataset": str((config.get("dataset") or {}).get("name")),
        ROLE_TAG: "run",
        STUDY_TAG: study_of(config),
        **process_tags(),
        **(extra_tags or {}),
    }
    if tracking.git_commit():
        tags["mlflow.source.git.commit"] = tracking.git_commit()
    return tags


def run_name_of(config: Mapping[str, Any], tags: Mapping[str, str]) -> str:
    """``tracking.run_name``, else ``<learner>-<dataset>``."""
    return (config.get("tracking") or {}).get("run_name") or f"{tags['learner']}-{tags['dataset']}"


def execute(config: Mapping[str, Any], extra_tags: Mapping[str, str] | None = None) -> RunOutcome:
    """One run, logged: validate → create the MLflow run → fit and evaluate → one batched write.

    ``extra_tags`` go on the run from its creation (a sweep's parent id, study, overrides).
    """
    learner, dataset = prepare(config)
    settings = config.get("tracking") or {}
    uri = tracking.resolve_tracking_uri(settings.get("uri"))
    client, experiment_id = tracking.open_experiment(
        uri, settings.get("experiment") or tracking.DEFAULT_EXPERIMENT
    )
    tags = run_tags(config, extra_tags)
    run_id = tracking.start_run(client, experiment_id, run_name_of(config, tags), tags)
    try:
        outcome = fit_and_evaluate(learner, dataset)
        tracking.write_run(
            client, run_id, tracking.flatten(config), outcome.metrics, outcome.curves, outcome.tags
        )
        tracking.end_run(client, run_id, "FINISHED")
    except BaseException as exc:
        try:  # a failed run still says what it ran: its config as params
            tracking.write_run(client, run_id, tracking.flatten(config), {}, {}, {})
        except Exception:  # the params were written already (the failure came after)
            pass
        tracking.fail_run(client, run_id, exc)
        exc.lincls_run_id = run_id  # the caller can tell the run exists (and is FAILED)
        raise
    outcome.run_id = run_id
    outcome.tags.update(tags)
    return outcome


def execute_deferred(
    config: Mapping[str, Any], extra_tags: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """One run measured but not written: what ``tracking.write_payload`` needs to log it.

    A process pool's workers use it so that one process writes every run: SQLite serialises
    writers, and two processes writing at once each took ~4× longer a run here.
    """
    tags = run_tags(config, extra_tags)
    payload: dict[str, Any] = {
        "run_name": run_name_of(config, tags),
        "tags": tags,
        "params": tracking.flatten(config),
        "metrics": {},
        "curves": {},
        "status": "FINISHED",
        "error": None,
    }
    try:
        outcome = fit_and_evaluate(*prepare(config))
    except Exception as exc:
        payload.update(status="FAILED", error=f"{type(exc).__name__}: {exc}")
        payload["input_error"] = isinstance(exc, LinclsInputError)
        return payload
    payload.update(metrics=outcome.metrics, curves=outcome.curves)
    payload["tags"] = {**tags, **outcome.tags}
    return payload
