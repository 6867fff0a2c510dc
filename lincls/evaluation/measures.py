"""What a fitted run measured, as metrics, curves and tags (plain dicts; no MLflow here).

``evaluation.fit_and_evaluate`` fits the learner in its orderings and hands the fitted models to
these functions: the online record (mistakes, updates, passes, their curves), the certificates'
geometry, each bound at the ordering closest to breaking it, and the weights of low-dimensional
runs.

The package's other modules: ``measures`` (the record, curves and bounds as metrics and tags),
``hyperplane`` (the learned hyperplane's margins) and ``slack`` (Novikoff's proof, factor by
factor).
"""

from __future__ import annotations

import functools
import json

import numpy as np
from sklearn.base import ClassifierMixin

from lincls import bounds as bounds_mod
from lincls.bounds._best import separator as best_separator
from lincls.bounds._registry import A_POSTERIORI, A_PRIORI, BEST
from lincls.data import Dataset, column_names
from lincls.evaluation.slack import Comparator, novikoff_comparator, novikoff_slack
from lincls.geometry import Certificate, hinge_deficit
from lincls.learners._base import scores_linearly

CURVE_POINTS = 200
WEIGHTS_MAX_FEATURES = 3  # weights of low-dimensional runs are logged, for pictures

Curves = dict[str, list[tuple[int, float]]]


def accuracy(learner: ClassifierMixin, X: np.ndarray, y: np.ndarray) -> float:
    """``learner.score(X, y)``: scikit-learn's mean accuracy, ``numpy.average`` of ``y ==
    learner.predict(X)``, without its checks of the inputs (~4 ms a call, a tenth of a cheap
    run's cost): a run's data were checked when they were built. A learner with a ``score`` of
    its own is asked for it."""
    # a diverged rule's activations are inf or nan: its accuracy is what it is, without warnings
    with np.errstate(over="ignore", invalid="ignore"):
        if type(learner).score is not ClassifierMixin.score:
            return float(learner.score(X, y))
        return float(np.average(learner.predict(X) == y))


@functools.lru_cache(maxsize=1024)
def log_spaced_steps(total: int, count: int = CURVE_POINTS) -> np.ndarray:
    """At most ``count`` distinct integer steps in [1, total], spaced evenly on a log scale
    (read-only: made once per (total, count) a process, as a sweep's runs share them)."""
    if total < 1:
        steps = np.zeros(0, dtype=np.int64)
    else:
        steps = np.unique(np.round(np.geomspace(1, total, num=min(count, total))).astype(np.int64))
    if steps.shape[0] < min(count, total):  # rounding merged some small steps: fill from the start
        extra = np.setdiff1d(np.arange(1, total + 1), steps)[: min(count, total) - steps.shape[0]]
        steps = np.union1d(steps, extra)
    steps.flags.writeable = False
    return steps


def drop_flat_interiors(steps: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The indices of a curve's points to keep: all but those strictly inside a run of equal
    values. A line or a step chart through the kept points is the one through them all (a flat
    run is drawn flat from its first point to its last either way); a converged run's cumulative
    mistakes keep ~40 of their 200 points, and each point costs the store a row."""
    n = values.shape[0]
    if n <= 2:
        return np.arange(n)
    inside = np.zeros(n, dtype=bool)
    inside[1:-1] = (values[1:-1] == values[:-2]) & (values[1:-1] == values[2:])
    return np.flatnonzero(~inside)


def certificate_metrics(certs: list[Certificate]) -> tuple[dict[str, float], dict[str, str]]:
    """Each certificate's γ (its margin), R, the deficit D at the γ Freund–Schapire picks, and
    for one the solver found, its relative duality gap."""
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
        if getattr(cert, "gap", None) is not None:  # a solved certificate's duality gap
            metrics[f"{prefix}.gap"] = float(cert.gap)
        tags[prefix] = "separates" if cert.separates else "does not separate"
    return metrics, tags


def weight_metrics(learner, dataset: Dataset) -> dict[str, float]:
    """``weights.coef.<j>`` and ``weights.intercept`` of a binary learner scoring w·x + b, d ≤ 3.

    With so few features the weights are a handful of numbers, and with the data rebuilt from the
    run's params they draw the decision boundary (``lincls.experiments.report``).
    """
    coef = getattr(learner, "coef_", None)
    linear = scores_linearly(type(learner))
    if coef is None or not linear or dataset.X.shape[1] > WEIGHTS_MAX_FEATURES:
        return {}
    if len(learner.classes_) != 2 or np.shape(coef) != (1, dataset.X.shape[1]):
        return {}
    weights = {f"weights.coef.{j}": float(w) for j, w in enumerate(np.ravel(coef))}
    weights["weights.intercept"] = float(np.ravel(learner.intercept_)[0])
    return weights


COLUMNS_ARTIFACT = "dataset/columns.json"


def column_map(dataset: Dataset) -> tuple[dict[str, str], dict[str, str]]:
    """A file dataset's features as params and an artifact: (params, artifacts name → text).

    ``dataset.columns`` is the list of feature names in order (``Outlook=Rainy`` for the binary
    feature of one value of a categorical column, seed 000 §1), so a weight j reads as what it
    weighs; the artifact adds the label column and the class names. Nothing for other data.
    """
    columns = dataset.params.get("columns")
    if columns is None:
        return {}, {}
    names = column_names(columns)
    record = {
        "features": [{"index": j, **c} for j, c in enumerate(columns)],
        "label_column": dataset.params.get("label_column"),
        "classes": dataset.params.get("classes"),
    }
    text = json.dumps(record, indent=1, ensure_ascii=False, default=str)
    return {"dataset.columns": json.dumps(names, ensure_ascii=False)}, {COLUMNS_ARTIFACT: text}


def record_metrics(learners: list) -> tuple[dict[str, float], Curves]:
    """The online record of the fits (one per ordering): counts averaged, the first one's curves.

    ``mistakes`` is the mean over orderings, with ``mistakes_std``, ``_min``, ``_max`` and
    ``updates_std`` when there are several (as LIBOL reports); ``presented`` the examples
    presented (the mean); a mini-batch learner adds its batches.
    """
    learner = learners[0]
    mistakes = np.array([m.mistakes_ for m in learners], dtype=np.float64)
    metrics = {
        "mistakes": float(mistakes.mean()),
        "updates": float(np.mean([m.updates_ for m in learners])),
        "passes_run": float(np.mean([m.n_passes_ for m in learners])),
        "converged": float(np.mean([m.converged_ for m in learners])),
        # the trivial bound: a mistake bound at or above it is vacuous
        "presented": float(np.mean([m.n_steps_ for m in learners])),
    }
    if len(learners) > 1:
        updates = np.array([m.updates_ for m in learners], dtype=np.float64)
        metrics.update(
            orders=float(len(learners)),
            mistakes_std=float(mistakes.std()),
            mistakes_min=float(mistakes.min()),
            mistakes_max=float(mistakes.max()),
            updates_std=float(updates.std()),
        )
    curves: Curves = {
        "mistakes_per_pass": [(p + 1, float(m)) for p, m in enumerate(learner.mistakes_per_pass_)]
    }
    steps = log_spaced_steps(learner.n_steps_)
    cumulative = np.searchsorted(learner.mistake_steps_, steps, side="left")
    kept = drop_flat_interiors(steps, cumulative)
    curves["cumulative_mistakes"] = [
        (int(s), float(c)) for s, c in zip(steps[kept], cumulative[kept], strict=True)
    ]
    per_batch = getattr(learner, "mistakes_per_batch_", None)
    if per_batch is not None:  # a mini-batch learner: its batches and each one's mistakes
        metrics["batches"] = float(np.mean([m.n_batches_ for m in learners]))
        batches = log_spaced_steps(per_batch.shape[0])
        batches = batches[drop_flat_interiors(batches, per_batch[batches - 1])]
        curves["mistakes_per_batch"] = [(int(s), float(per_batch[s - 1])) for s in batches]
    sizes = getattr(learner, "support_size_", None)
    if sizes is not None and sizes.shape[0]:  # a support-set kernel learner: |S| (step = example)
        metrics["support_size"] = float(np.mean([m.n_support_ for m in learners]))
        at = log_spaced_steps(sizes.shape[0])
        at = at[drop_flat_interiors(at, sizes[at - 1])]
        curves["support_size"] = [(int(s), float(sizes[s - 1])) for s in at]
    return metrics, curves


TIGHTEST = {A_PRIORI: "tightest", A_POSTERIORI: "tightest_a_posteriori"}


def bound_ratio(mistakes: float, bound: float) -> float:
    """mistakes / bound, exactly 1 where the count meets the bound up to ``holds``' tolerance.

    A bound computed as 9.000000000000002 for 9 mistakes reads 1, and a count that ``holds``
    accepts never reads above 1: a ratio above 1 is a violation, and only that.
    """
    ratio = float(mistakes) / float(bound)
    if bounds_mod.holds(mistakes, bound) and ratio >= 1.0 - bounds_mod.RELATIVE_TOLERANCE:
        return 1.0
    return ratio


def bound_metrics(
    evaluations: list, mistakes: np.ndarray, test_error: float | None
) -> tuple[dict[str, float], dict[str, str]]:
    """Each bound at the ordering closest to breaking it, the tightest, and why others are out.

    A mistake bound is a worst case over orders, so the worst ordering is its test:
    ``bound_ratio.X`` = max over orderings of mistakes / bound (``bound_ratio``). A bound that is
    vacuous in every ordering (at or above the examples presented) logs its value, no ratio, and
    is named in the tag ``bounds.vacuous``. The tightest is named per family: ``bound.tightest``
    among the a priori bounds, ``bound.tightest_a_posteriori`` among those that read the run's
    own mistakes; a vacuous bound is never either. ``bound_source.X`` tags each bound logged with
    its ``lincls.bounds.Source``: "published: …", "derived: …", "not read: …" or "not covered: …".
    """
    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    violated = False
    logged: dict[str, tuple[float, float]] = {}
    vacuous: list[str] = []
    for name in evaluations[0].values:
        applied = [(k, ev) for k, ev in enumerate(evaluations) if name in ev.values]
        violated |= any(not bounds_mod.holds(mistakes[k], ev.values[name]) for k, ev in applied)
        informative = [(k, ev) for k, ev in applied if name not in ev.vacuous]
        if informative:
            ratio, value, k = max(
                (bound_ratio(mistakes[k], ev.values[name]), ev.values[name], k)
                for k, ev in informative
            )
            logged[name] = (value, ratio)
            metrics[f"bound_ratio.{name}"] = ratio
            if len(evaluations) > 1:  # LIBOL's protocol: the ratio's mean ± std over orderings
                ratios = [bound_ratio(mistakes[j], ev.values[name]) for j, ev in informative]
                metrics[f"bound_ratio_mean.{name}"] = float(np.mean(ratios))
                metrics[f"bound_ratio_std.{name}"] = float(np.std(ratios))
        else:  # it says nothing in any ordering: its value, for the record, and no ratio
            k = min(applied, key=lambda pair: pair[1].values[name])[0]
            value = evaluations[k].values[name]
            vacuous.append(name)
        metrics[f"bound.{name}"] = value
        tags[f"bound.{name}.certificate"] = evaluations[k].sources[name]
        tags[f"bound_source.{name}"] = str(bounds_mod.source_of(name))
        for key, detail in evaluations[k].details.get(name, {}).items():
            metrics[f"bound_param.{name}.{key}"] = detail
    for family, key in TIGHTEST.items():
        mine = [n for n in logged if bounds_mod.family_of(n) == family]
        if mine:
            name = min(mine, key=lambda n: logged[n][0])
            metrics[f"bound.{key}"], metrics[f"bound_ratio.{key}"] = logged[name]
            tags[f"bound.{key}"] = name
    if vacuous:
        tags["bounds.vacuous"] = ", ".join(vacuous)
    for name, value in evaluations[0].test_error.items():
        metrics[f"test_error_bound.{name}"] = value
        tags[f"test_error_bound.{name}.certificate"] = evaluations[0].sources[name]
        tags[f"bound_source.{name}"] = str(bounds_mod.source_of(name))
        if test_error is not None:
            metrics[f"test_error_bound_ratio.{name}"] = test_error / value
    tags["bound_violated"] = str(violated).lower()
    skipped = evaluations[0].skipped
    reasons = set(skipped.values())
    if len(reasons) == 1 and not evaluations[0].values:  # one reason rules out every bound
        tags["bounds.skipped"] = f"every bound: {reasons.pop()}"
    else:
        tags["bounds.skipped"] = "; ".join(f"{k}: {v}" for k, v in skipped.items())
    return metrics, tags


def likelihood_metrics(learner) -> tuple[dict[str, float], Curves]:
    """An iterative likelihood solver's (MaxEnt) final log-likelihood, iterations and curve."""
    history = learner.log_likelihood_
    metrics = {
        "log_likelihood": float(history[-1]),
        "iterations": float(learner.n_iter_),
        "converged": float(learner.converged_),
    }
    steps = np.r_[0, log_spaced_steps(learner.n_iter_)]
    return metrics, {"log_likelihood_per_iteration": [(int(s), float(history[s])) for s in steps]}


NOVIKOFF_BOUNDS = ("novikoff", "novikoff_bias")


def slack_metrics(
    learner, dataset: Dataset, evaluation, certificates: tuple, facts=None
) -> tuple[dict[str, float], dict[str, str], Curves]:
    """``bound_slack.{progress,angle,norm}`` of the logged Novikoff bound, and the lemma curves.

    Only for the perceptron rule with a constant step (``lincls.evaluation.slack``): every update a
    mistake. The comparator is the certificate the logged bound used, on the vectors the learner
    sees.
    """
    name = next((n for n in NOVIKOFF_BOUNDS if n in evaluation.values), None)
    plain_rule = getattr(learner, "schedule", "constant") == "constant"
    if name is None or not plain_rule or learner.updates_ != learner.mistakes_:
        return {}, {}, {}
    source = evaluation.sources[name]
    c = float(getattr(learner, "bias_feature_", 0.0))
    if source == BEST:  # the best comparator on (x, c) itself
        found = best_separator(facts) if facts is not None else "no facts"
        if isinstance(found, str):
            return {}, {}, {}
        v = found.solution.v
        comparator = Comparator(v / np.linalg.norm(v), found.margin, found.radius)
    else:
        certificate = next((x for x in certificates if x is not None and x.source == source), None)
        if certificate is None or certificate.u is None:
            return {}, {}, {}
        comparator = novikoff_comparator(certificate, dataset.radius, c)
    y_signed = np.where(dataset.y == learner.classes_[1], 1.0, -1.0)
    steps = log_spaced_steps(learner.mistakes_)
    slack = novikoff_slack(dataset.X, y_signed, learner.mistake_indices_, comparator, c, steps)
    if slack is None:
        return {}, {}, {}
    metrics = {
        "bound_slack.progress": slack.progress,
        "bound_slack.angle": slack.angle,
        "bound_slack.norm": slack.norm,
    }
    curves: Curves = {
        "lemma.progress": [
            (int(s), float(v)) for s, v in zip(slack.steps, slack.progress_curve, strict=True)
        ],
        "lemma.norm": [
            (int(s), float(v)) for s, v in zip(slack.steps, slack.norm_curve, strict=True)
        ],
    }
    return metrics, {"bound_slack.bound": name}, curves


def companion_curves(curves: Curves, metrics: dict[str, float]) -> Curves:
    """Series to overlay on a curve in one chart: the tightest bound beside the cumulative
    mistakes, the mistake count beside the lemma curves. Both are straight lines, so their first
    and last steps draw them exactly."""
    extra: Curves = {}
    cumulative = curves.get("cumulative_mistakes")
    if cumulative and "bound.tightest" in metrics:
        ends = {cumulative[0][0], cumulative[-1][0]}
        extra["cumulative_mistakes_bound"] = [(s, metrics["bound.tightest"]) for s in sorted(ends)]
    lemma = curves.get("lemma.progress")
    if lemma:
        extra["lemma.mistakes"] = [(s, float(s)) for s in sorted({lemma[0][0], lemma[-1][0]})]
    return extra
