"""ALMA_p's bound on its corrections (Gentile 2001, "A New Approximate Maximal Margin
Classification Algorithm", JMLR 2, 213–242).

The setting of the paper's Theorem 3: ALMA_p(α; B, C) with B = 1/α and C = √2, started from
w = 0, on instances normalised in the p-norm (x̂ = x/‖x‖_p), and a comparator u with ‖u‖_q = 1
(1/p + 1/q = 1) and margin γ = min_t y_t u·x̂_t > 0. The number of corrections m (every mistake is
one) is then at most

    2(p − 1)/γ² · (2/α − 1)² + 8/α − 4,

for any order and any number of passes (a second pass is more of the same sequence). The paper's
statement was not read (no public copy at hand had it; it is stated for a range of B and C): the
formula is its form as commonly quoted, not proved in lincls, and checked numerically only
(``tests/test_alma.py``: 2,000 random separable instances, and a planted comparator for p = 3).
Its registry status is "not read"; the reference's papers page says what of the paper was read,
and where.

The vectors ALMA sees are x' = (x, c) (c = 1 with ``bias="feature"``, else 0), normalised; a
certificate (u, b) with functional margins y_t(u·x_t + b) gives the comparator u' = (u, b/c)
(b = 0 without a bias), whose normalised margin is min_t y_t(u·x_t + b)/(‖u'‖_q ‖x'_t‖_p). With
the rows at hand ‖x'_t‖_p is measured; without them ‖x'_t‖_p ≤ ‖x'_t‖₂ (p ≥ 2) gives a smaller
margin, so a larger, still valid, bound. The bound is decreasing in γ, so its best comparator is
the maximum-margin u on the normalised rows: for p = 2 a hard-margin SVM through the origin on
y_t x'_t/‖x'_t‖₂ (``lincls.geometry.comparators.hard_margin``), γ* = 1/‖v*‖. For p ≠ 2 that problem
is a q-norm program, not solved here: the certificates alone are used.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from lincls.bounds import _best
from lincls.bounds._registry import NOT_READ, REGISTRY, BoundSpec, BoundValue, RunFacts, Source
from lincls.geometry import comparators, row_norms

PAPER_C = math.sqrt(2.0)


def alma_bound(margin: float, alpha: float, p: float = 2.0) -> float:
    """Gentile (2001), Theorem 3: corrections ≤ 2(p − 1)/γ²·(2/α − 1)² + 8/α − 4.

    For ALMA_p(α; 1/α, √2) from w = 0, α ∈ (0, 1], p ≥ 2, γ the margin of a unit q-norm
    comparator on the p-normalised instances. At α = 1: 2(p − 1)/γ² + 4.
    """
    return 2.0 * (p - 1.0) / margin**2 * (2.0 / alpha - 1.0) ** 2 + 8.0 / alpha - 4.0


def _row_p_norms(facts: RunFacts, c: float, p: float) -> np.ndarray | None:
    """‖x'_t‖_p of every training row (an upper bound, ‖x'_t‖₂, without the rows), or None."""
    X = facts.X
    if X is not None and p != 2.0:
        powered = X.copy() if sp.issparse(X) else np.abs(np.asarray(X, dtype=np.float64)) ** p
        if sp.issparse(X):
            powered.data = np.abs(powered.data.astype(np.float64)) ** p
        sums = np.asarray(powered.sum(axis=1), dtype=np.float64).ravel()
        return (sums + c**p) ** (1.0 / p)
    if X is not None:
        return np.sqrt(row_norms(X) ** 2 + c**2)
    if facts.sq_norms is None:
        return None
    return np.sqrt(np.asarray(facts.sq_norms, dtype=np.float64) + c**2)


def normalized_margin(facts: RunFacts) -> float | None:
    """min_t y_t(u·x_t + b)/(‖u'‖_q ‖x'_t‖_p) of the certificate, or None if it can't be read."""
    cert, learner = facts.certificate, facts.learner
    c, p = float(learner.bias_feature_), float(learner.p)
    if cert.margins is None:
        return None
    norms = _row_p_norms(facts, c, p)
    if norms is None or norms.shape[0] != cert.margins.shape[0] or not (norms > 0).all():
        return None
    q = p / (p - 1.0)
    comparator = np.r_[cert.u, cert.b / c] if c != 0.0 else np.asarray(cert.u)
    u_norm = float(np.sum(np.abs(comparator) ** q) ** (1.0 / q))
    return float(np.min(np.asarray(cert.margins) / norms)) / u_norm


def _applies(facts: RunFacts) -> str | None:
    learner = facts.learner
    reason = _learner(facts)
    if reason:
        return reason
    cert = facts.certificate
    if cert is None:
        return "no certificate (separator) for the data"
    if not cert.separates:
        return "the certificate does not separate the data"
    if learner.bias_feature_ == 0.0 and not cert.homogeneous:
        return "the separator has an offset b ≠ 0 and the learner has no bias"
    margin = normalized_margin(facts)
    if margin is None or not margin > 0.0:
        return "the certificate's margin on the normalised rows is unknown or not positive"
    return None


def _learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "alma":
        return "not an ALMA learner"
    if not learner.zero_init_:
        return "the learner did not start from w = 0"
    if not learner.normalize:
        return "the instances are not normalised (normalize=false)"
    if not math.isclose(learner.B_, 1.0 / float(learner.alpha), rel_tol=1e-12):
        return f"B = {learner.B_:g} is not 1/alpha (the theorem's choice)"
    if not math.isclose(float(learner.C), PAPER_C, rel_tol=1e-12):
        return f"C = {float(learner.C):g} is not √2 (the theorem's choice)"
    return None


def _value(facts: RunFacts) -> BoundValue:
    learner = facts.learner
    margin = normalized_margin(facts)
    return BoundValue(
        alma_bound(margin, float(learner.alpha), float(learner.p)), {"margin": margin}
    )


def best_alma(facts: RunFacts) -> BoundValue | str:
    """ALMA_2's bound at the largest margin on the normalised presented rows (a hard-margin SVM
    on them: the theorem's γ is a minimum over the sequence the learner was shown)."""
    reason = _learner(facts) or _best._missing(facts)
    if reason:
        return reason
    learner = facts.learner
    if float(learner.p) != 2.0:
        return "the best q-norm comparator (p ≠ 2) is not computed; certificates only"
    c = float(learner.bias_feature_)

    def solve():
        X, y = _best.presented_vectors(facts, c)
        norms = np.sqrt(row_norms(X) ** 2)
        if not (norms > 0).all():
            return None
        scale = y / norms
        Z = sp.diags(scale) @ X if sp.issparse(X) else X * scale[:, None]
        return comparators.hard_margin(Z)

    solution = _best._solved(facts, "alma", (c,), solve)
    if solution is None:
        return "the normalised rows the learner sees are not linearly separable"
    margin = 1.0 / math.sqrt(solution.value)
    value = alma_bound(margin, float(learner.alpha), 2.0)
    return BoundValue(value, {"margin": margin, "radius": 1.0, "gap": solution.gap})


REGISTRY.append(
    BoundSpec(
        "alma",
        _applies,
        _value,
        best=best_alma,
        source=Source(
            NOT_READ,
            "the form of Gentile 2001 (JMLR 2) Thm 3 at B = 1/α, C = √2, not proved in lincls; "
            "not read (its public copies at hand"
            " show only the abstract and opening: reference, papers)",
        ),
    )
)
