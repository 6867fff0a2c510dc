"""The normalized perceptron's mistake bound, and a wrong one beside it (on purpose).

``normalized_novikoff`` is a theorem, proved below. ``normalized_novikoff_halved`` is half of it
and is NOT a theorem: it is registered so that the checks of lincls (the orthogonal game, the
every-option property test, the report's violations) can be seen to catch a wrong bound.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lincls.bounds import BoundValue, RunFacts
from lincls.geometry.comparators import hard_margin

RULE = "on y·w·x ≤ 0, w ← w + lr·y·x/‖x‖, from w = 0, b = 0 (no bias), any lr > 0"


def normalized_novikoff(radius: float, margin: float) -> float:
    """(R/γ)²: the normalized perceptron's mistakes, for any order and number of passes.

    Theorem (Novikoff 1962, applied to the normalized examples). Let x_1, x_2, … be the examples
    presented, with labels y_t ∈ {−1, +1}, and u a unit vector with y_t u·x_t ≥ γ > 0 and
    ‖x_t‖ ≤ R for every t. The rule "on y_t w·x_t ≤ 0, w ← w + η y_t x_t/‖x_t‖" (η > 0) from
    w = 0 makes at most 1/ρ² ≤ (R/γ)² mistakes, ρ = min_t y_t u·x_t/‖x_t‖.

    Proof. ‖x_t‖ > 0, as y_t u·x_t ≥ γ > 0; let z_t = x_t/‖x_t‖. Then y_t w·x_t ≤ 0 exactly when
    y_t w·z_t ≤ 0, and the step is η y_t z_t: the rule is the perceptron on the z_t, which have
    ‖z_t‖ = 1 and y_t u·z_t ≥ ρ. Let w_k be the weights after k mistakes. (i) u·w_k =
    u·w_{k−1} + η y_t u·z_t ≥ u·w_{k−1} + ηρ, so u·w_k ≥ kηρ. (ii) ‖w_k‖² = ‖w_{k−1}‖² +
    2η y_t w_{k−1}·z_t + η² ≤ ‖w_{k−1}‖² + η², the middle term being ≤ 0 on a mistake; so
    ‖w_k‖² ≤ kη². By Cauchy–Schwarz kηρ ≤ u·w_k ≤ ‖w_k‖ ≤ η√k, so k ≤ 1/ρ². Finally
    y_t u·z_t = y_t u·x_t/‖x_t‖ ≥ γ/R, so 1/ρ² ≤ (R/γ)². ∎
    """
    return (radius / margin) ** 2


def applies(facts: RunFacts) -> str | None:
    """Why the theorem does not cover the run (None if it does): it needs w = 0, b = 0 at the
    start and a separator through the origin with margin γ > 0."""
    certificate = facts.certificate
    if not getattr(facts.learner, "zero_init_", False):
        return "the learner did not start from w = 0, b = 0"
    if certificate is None or not certificate.separates:
        return "no separator of the data"
    if not certificate.homogeneous:
        return "the separator has an offset b ≠ 0 and the rule has no bias"
    return None


def value(facts: RunFacts) -> float:
    """The theorem's (R/γ)² at the run's certificate, R the largest presented norm."""
    return normalized_novikoff(facts.radius, facts.certificate.margin)


def best(facts: RunFacts) -> BoundValue | str:
    """The theorem's 1/ρ² at its best unit u: ρ* = 1/‖v*‖, v* = argmin ‖v‖ s.t. y_t v·z_t ≥ 1
    over the presented rows (the hard-margin SVM through the origin of the z_t = x_t/‖x_t‖)."""
    if not getattr(facts.learner, "zero_init_", False):
        return "the learner did not start from w = 0, b = 0"
    if facts.X is None:
        return "the run kept no training rows (certificates.best=false)"
    X = facts.X.toarray() if sp.issparse(facts.X) else np.asarray(facts.X, dtype=np.float64)
    if facts.presentations is not None:
        X, labels = X[facts.presentations > 0], facts.y[facts.presentations > 0]
    else:
        labels = facts.y
    norms = np.linalg.norm(X, axis=1)
    if X.shape[0] == 0 or not (norms > 0.0).all():
        return "a presented row is 0: no direction to separate"
    signs = np.where(labels == facts.learner.classes_[1], 1.0, -1.0)
    found = hard_margin(signs[:, None] * X / norms[:, None])
    if found is None:
        return "the normalized rows are not separable through the origin"
    return BoundValue(found.value, {"margin": 1.0 / np.sqrt(found.value), "gap": found.gap})


def halved(facts: RunFacts) -> float:
    """WRONG ON PURPOSE: half of ``normalized_novikoff``, which no theorem gives. The orthogonal
    game forces ⌊(R/γ)²⌋ mistakes on the rule, twice this where (R/γ)² is an integer ≥ 1."""
    return value(facts) / 2.0
