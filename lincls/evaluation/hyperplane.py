"""The learned hyperplane's margins over the training data (seed 004's definitions).

For a hyperplane (w, b) and the training set z = {(x_i, y_i)}, seed 004 defines

- the *functional margin* of example i: γ_i = y_i (w·x_i + b); its distribution over z is the
  functional margin distribution, and its minimum the margin of the hyperplane;
- the *geometric margin*: the same for the normalised hyperplane (w/‖w‖, b/‖w‖), the signed
  Euclidean distance of x_i from the boundary w·x + b = 0 (‖w‖ without b);
- the *margin of the training set*: the largest geometric margin over all hyperplanes, which the
  maximum-margin hyperplane attains. That is the hard-margin SVM certificate of
  ``lincls.geometry.certificates`` for the same class of hyperplanes: ``svm`` (with an offset b) for
  a learner with a bias (a bias feature or a separate b), ``svm_homogeneous`` (b = 0) for one
  without. ``certificates_of`` already picks the class by the learner's bias rule.

The hyperplane is the learner's linear rule ``coef_``, ``intercept_`` in the space of the
examples x (what ``decision_function`` scores as w·x + b): a bias feature c appended to x shows
up as b = w_c·c, so the learner's bias rule changes b, never the space the margin is measured in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from lincls.geometry import Certificate, functional_margins

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
HISTOGRAM_BINS = 20
HISTOGRAM_ARTIFACT = "hyperplane/margin_histogram.json"
MAX_MARGIN_SOURCES = ("svm", "svm_homogeneous")


@dataclass(frozen=True)
class HyperplaneMargins:
    """Seed 004's margins of (w, b) on (X, y): every example's functional and geometric margin.

    ``geometric`` is None when w = 0 (no boundary to measure a distance from).
    """

    w: np.ndarray
    b: float
    functional: np.ndarray
    geometric: np.ndarray | None

    @property
    def norm(self) -> float:
        """‖w‖, which the geometric margins divide by (b not counted)."""
        return float(np.linalg.norm(self.w))

    @property
    def functional_margin(self) -> float:
        """The margin of the hyperplane: min_i y_i (w·x_i + b)."""
        return float(self.functional.min())

    @property
    def margin(self) -> float | None:
        """The geometric margin: min_i y_i (w·x_i + b) / ‖w‖ (None when w = 0)."""
        return None if self.geometric is None else float(self.geometric.min())


def linear_rule(learner) -> tuple[np.ndarray, float] | None:
    """(w, b) of a fitted binary learner with one linear rule ``coef_`` (1 × d), ``intercept_``;
    None for a multiclass, kernel or other learner without one."""
    coef = getattr(learner, "coef_", None)
    intercept = getattr(learner, "intercept_", None)
    classes = getattr(learner, "classes_", None)
    if coef is None or intercept is None or classes is None or len(classes) != 2:
        return None
    coef = np.asarray(coef, dtype=np.float64)
    if coef.ndim != 2 or coef.shape[0] != 1 or np.size(intercept) != 1:
        return None
    return coef[0], float(np.ravel(intercept)[0])


def hyperplane_margins(X, y_signed: np.ndarray, w: np.ndarray, b: float) -> HyperplaneMargins:
    """Every example's functional margin y(w·x + b) and geometric margin y(w·x + b)/‖w‖.

    ``X`` dense or CSR, ``y_signed`` ±1: seed 004's definitions (module docstring).
    """
    w = np.asarray(w, dtype=np.float64)
    functional = functional_margins(X, np.asarray(y_signed, dtype=np.float64), w, float(b))
    norm = float(np.linalg.norm(w))
    geometric = functional / norm if norm > 0.0 else None
    return HyperplaneMargins(w=w, b=float(b), functional=functional, geometric=geometric)


def max_margin_certificate(certificates) -> Certificate | None:
    """The data's maximum-margin hyperplane among a run's certificates: the hard-margin SVM's,
    when it separates (``certificates_of`` makes it homogeneous exactly when the learner is)."""
    for cert in certificates:
        if cert is not None and cert.source in MAX_MARGIN_SOURCES and cert.separates:
            return cert
    return None


def _key(q: float) -> str:
    return f"q{round(100 * q):02d}"


def hyperplane_metrics(
    learner, X, y, certificates=()
) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """The ``hyperplane.*`` metrics, tags and the histogram artifact of a fitted binary linear
    learner on its training data (X, y): (metrics, tags, artifacts name → text).

    ``hyperplane.margin`` (geometric, the minimum), ``.functional_margin``, ``.norm`` (‖w‖),
    ``.margin_<q>`` (quantiles of the geometric margins), ``.nonpositive`` (the fraction with
    y(w·x + b) ≤ 0: misclassified, a zero activation counting as a mistake), and with the data's
    maximum-margin certificate among ``certificates``, ``.max_margin`` and ``.margin_to_max`` =
    margin / max margin (1: the learner found the maximum-margin hyperplane).
    """
    rule = linear_rule(learner)
    if rule is None or X.shape[0] == 0:
        return {}, {}, {}
    if not (np.all(np.isfinite(rule[0])) and np.isfinite(rule[1])):
        # a rule without a bound may diverge (PA's scikit-learn bias step scaled above 1)
        return {}, {"hyperplane.note": "the weights are not finite: no hyperplane"}, {}
    with np.errstate(over="ignore"):
        square = float(np.vdot(rule[0], rule[0]))
    if not np.isfinite(square):  # finite weights near the largest double (Winnow at α = 1e308)
        note = "the weights' squared norm is past the float range: no hyperplane"
        return {}, {"hyperplane.note": note}, {}
    y_signed = np.where(np.asarray(y) == learner.classes_[1], 1.0, -1.0)
    found = hyperplane_margins(X, y_signed, *rule)
    metrics = {
        "hyperplane.functional_margin": found.functional_margin,
        "hyperplane.norm": found.norm,
        "hyperplane.nonpositive": float(np.mean(found.functional <= 0.0)),
    }
    tags: dict[str, str] = {}
    voted = hasattr(learner, "vectors_") and getattr(learner, "prediction", "") != "last"
    if voted and learner.prediction != "average":
        tags["hyperplane.rule"] = (
            "the c-weighted mean of the voted vectors (the vote itself is not one hyperplane)"
        )
    if found.geometric is None:
        tags["hyperplane.note"] = "w = 0: no boundary, so no geometric margin"
        return metrics, tags, {}
    metrics["hyperplane.margin"] = found.margin
    for q, value in zip(QUANTILES, np.quantile(found.geometric, QUANTILES), strict=True):
        metrics[f"hyperplane.margin_{_key(q)}"] = float(value)
    best = max_margin_certificate(certificates)
    if best is not None:
        metrics["hyperplane.max_margin"] = best.margin
        metrics["hyperplane.margin_to_max"] = found.margin / best.margin
        tags["hyperplane.max_margin.certificate"] = best.source
    return metrics, tags, {HISTOGRAM_ARTIFACT: margin_histogram(found, best)}


def histogram_edges(values: np.ndarray) -> int | np.ndarray:
    """``HISTOGRAM_BINS`` if that many equal bins over the range of ``values`` have distinct
    edges, else the single bin [min, max] (numpy refuses bins narrower than its rounding)."""
    low, high = float(values.min()), float(values.max())
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    if low < high and not np.all(edges[1:] > edges[:-1]):
        return np.array([low, high])
    return HISTOGRAM_BINS


def margin_histogram(found: HyperplaneMargins, best: Certificate | None = None) -> str:
    """The geometric margin distribution as JSON: ``HISTOGRAM_BINS`` equal bins over its range
    (``edges``, ``counts``), the margin, ‖w‖, b, and the data's maximum margin when known.

    Margins equal up to rounding (e.g. a square's four corners about a line through its centre)
    span a range too narrow for ``HISTOGRAM_BINS`` distinct edges: they get one bin over it.
    """
    counts, edges = np.histogram(found.geometric, bins=histogram_edges(found.geometric))
    record = {
        "quantity": "geometric margin y(w·x + b)/‖w‖ of each training example",
        "edges": [float(e) for e in edges],
        "counts": [int(c) for c in counts],
        "examples": int(found.functional.shape[0]),
        "margin": found.margin,
        "functional_margin": found.functional_margin,
        "norm": found.norm,
        "intercept": found.b,
        "max_margin": None if best is None else best.margin,
        "max_margin_certificate": None if best is None else best.source,
    }
    return json.dumps(record, indent=1, ensure_ascii=False)
