"""The second-order perceptron's mistake bound, computed after the run (a posteriori).

Cesa-Bianchi, Conconi & Gentile, "A Second-Order Perceptron Algorithm", SIAM J. Comput. 34(3)
(2005), Theorem 1 (its form as quoted: the paper's statement was not read; the sketch below is
lincls's proof, registry status "derived"): the full-matrix second-order perceptron with
parameter a > 0, from v = 0, run on any sequence, makes M mistakes with, for every comparator u
and every γ > 0,

    M ≤ D_γ(u)/γ + (1/γ)·√((a‖u‖² + uᵀX_M X_Mᵀu) · Σ_i ln(1 + λ_i/a)),

where X_M holds the instances of the M mistake rounds as columns (one column per mistake, an
example missed twice twice), λ_i are the eigenvalues of X_M X_Mᵀ (so Σ_i ln(1 + λ_i/a) =
ln det(I + X_M X_Mᵀ/a)) and D_γ(u) = Σ_{t∈M} max(0, γ − y_t u·x_t) sums over the mistake
rounds. The form implemented is this one (the proof needs only the mistake rounds: Mγ − D_γ(u)
≤ u·v ≤ √(uᵀA_M u · vᵀA_M⁻¹v) and vᵀA_M⁻¹v ≤ ln(det(A_M)/aⁿ), A_M = aI + X_M X_Mᵀ; summing D over
every round, as the paper may also state it, only makes it larger).

It reads the run's own mistakes, so it is in the a posteriori family, and its infimum over
(u, γ) says nothing: at a fixed u it tends to M as γ grows (the right side is
M + (√(…) − Σ_{t∈M} y_t u·x_t)/γ once every mistake round falls short of γ), and the
Cauchy–Schwarz step makes it ≥ M everywhere. So the comparator set (every u, γ > 0), convex as
it is, is not searched: the bound is logged at a stated comparator, the certificate (u, b) made
the unit u' = (u, b/c)/√(1 + b²/c²) on the vectors (x, c) the learner sees, and at γ = its
margin where it separates (D = 0), otherwise at the γ where Freund and Schapire's bound with the
same u is smallest (as Mohri–Rostamizadeh's bound is logged). The diagonal variant is not
covered: the theorem is about the full matrix.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from lincls.bounds._registry import (
    A_POSTERIORI,
    DERIVED,
    REGISTRY,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.bounds.deficit import augmented_geometry, freund_schapire_grid


def second_order_bound(
    gamma: float, deficit: float, a: float, u_sq_norm: float, mistake_margins, log_det: float
) -> float:
    """Cesa-Bianchi, Conconi & Gentile (2005), Theorem 1, at one comparator u and γ > 0:
    D_γ(u)/γ + √((a‖u‖² + Σ_{t∈M} (u·x_t)²)·ln det(I + X_M X_Mᵀ/a))/γ.

    ``mistake_margins`` are y_t u·x_t over the mistake rounds (so uᵀX_M X_Mᵀu is the sum of
    their squares), ``deficit`` D_γ(u) = Σ_{t∈M} max(0, γ − y_t u·x_t), ``log_det`` =
    Σ_i ln(1 + λ_i/a).
    """
    margins = np.asarray(mistake_margins, dtype=np.float64)
    spread = a * u_sq_norm + float(margins @ margins)
    return (deficit + math.sqrt(spread * max(log_det, 0.0))) / gamma


def mistake_log_det(X, rows: np.ndarray, c: float, a: float) -> float:
    """ln det(I + X_M X_Mᵀ/a) = Σ_i ln(1 + λ_i/a) for the vectors (x_t, c) of the mistake rounds
    ``rows`` (with repetitions), through the smaller of the two Gram matrices (Sylvester).

    Summed as log1p over the Gram matrix's eigenvalues: a determinant of I + G/a rounds every
    λ_i/a below 10⁻¹⁶ away (one mistake row of norm 8·10⁻¹⁰ at a = 0.1: ln det = 0, and the
    bound 0 under 1 mistake)."""
    if rows.shape[0] == 0:
        return 0.0
    Xm = X[rows]
    if c != 0.0:
        column = np.full((rows.shape[0], 1), c)
        Xm = sp.hstack([Xm, column], format="csr") if sp.issparse(Xm) else np.hstack([Xm, column])
    small = Xm @ Xm.T if Xm.shape[0] <= Xm.shape[1] else Xm.T @ Xm
    gram = small.toarray() if sp.issparse(small) else np.asarray(small, dtype=np.float64)
    if not np.all(np.isfinite(gram)):  # squares past the float range
        return math.inf
    eigenvalues = np.maximum(np.linalg.eigvalsh(gram), 0.0)  # a negative one is rounding
    with np.errstate(over="ignore"):  # λ/a past the float range: the sum is +inf, as it is
        return float(np.sum(np.log1p(eigenvalues / a)))


def _learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "second_order":
        return "not a second-order perceptron"
    if learner.diagonal:
        return "the diagonal variant: the theorem is about the full matrix"
    if not learner.zero_init_:
        return "the learner did not start from w = 0"
    if facts.X is None:
        return "the training rows are not at hand (the bound reads the mistake rounds)"
    return None


def _applies(facts: RunFacts) -> str | None:
    reason = _learner(facts)
    if reason:
        return reason
    geometry = augmented_geometry(facts)
    if isinstance(geometry, str):
        return geometry
    if geometry[0].shape[0] and geometry[0].min() <= 0.0 and facts.presentations is None:
        return "the certificate does not separate and the presentations are unknown"
    return None


def stated_gamma(margins: np.ndarray, radius: float, presentations) -> float:
    """γ of an a posteriori bound at the unit comparator with ``margins``: its margin where it
    separates, else the γ at which Freund and Schapire's bound with that comparator is least."""
    if margins.shape[0] and margins.min() > 0.0:
        return float(margins.min())
    return freund_schapire_grid(radius, margins, presentations)[1]


def _value(facts: RunFacts) -> BoundValue:
    learner = facts.learner
    margins, radius = augmented_geometry(facts)
    gamma = stated_gamma(margins, radius, facts.presentations)
    rows = np.asarray(learner.mistake_indices_, dtype=np.int64)
    on_mistakes = margins[rows]
    deficit = float(np.maximum(gamma - on_mistakes, 0.0).sum())
    a = float(learner.a)
    log_det = mistake_log_det(facts.X, rows, float(learner.bias_feature_), a)
    value = second_order_bound(gamma, deficit, a, 1.0, on_mistakes, log_det)
    return BoundValue(value, {"gamma": gamma, "deficit": deficit, "log_det": log_det})


REGISTRY.append(
    BoundSpec(
        "second_order",
        _applies,
        _value,
        family=A_POSTERIORI,
        sequence=True,
        source=Source(
            DERIVED,
            "proof sketched in its docstring, in the form of Cesa-Bianchi, Conconi & Gentile 2005 "
            "(SICOMP 34) Thm 1, whose statement was not read",
        ),
    )
)
