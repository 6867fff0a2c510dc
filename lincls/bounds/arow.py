"""AROW's mistake bound, computed after the run (a posteriori).

Crammer, Kulesza & Dredze, "Adaptive Regularization of Weight Vectors", NIPS 22 (2009),
Theorem 2: AROW with parameter r > 0, from μ = 0 and Σ = I, on any sequence, makes M mistakes
with, for every comparator u,

    M ≤ √(r‖u‖² + uᵀX_A u) · √(ln det(I + X_A/r) + U) + Σ_{t∈A} g_t − U,

where A is the set of update rounds (M mistakes and U updates at a correct margin below 1, an
example updated twice counted twice), X_A = Σ_{t∈A} x_t x_tᵀ and g_t = max(0, 1 − y_t u·x_t).
``lincls/learners/arow.py`` records the update rounds (``update_indices_``) for it. The
paper's statement was not read (only its abstract): this is the theorem's form as quoted, not
proved in lincls and checked numerically only; its registry status is "not read" (the reference's
papers page says what of the paper was read, and where).

At u = 0 the right side is exactly M (every g_t = 1), and the statement holds for every u, so
its infimum over u (a convex set) is M itself and says nothing: like Mohri–Rostamizadeh's, the
bound is logged at a stated comparator, the certificate (u, b) made the unit u' on the vectors
(x, c) the learner sees and scaled to functional margin 1, u = u'/γ, with γ its margin where it
separates (then every g_t = 0) and otherwise the γ at which Freund and Schapire's bound with u'
is smallest. The diagonal variant is not covered: the theorem is about the full covariance.
"""

from __future__ import annotations

import math

import numpy as np

from lincls.bounds._registry import (
    A_POSTERIORI,
    NOT_READ,
    REGISTRY,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.bounds.deficit import augmented_geometry
from lincls.bounds.second_order import mistake_log_det, stated_gamma


def arow_bound(
    r: float, u_sq_norm: float, update_margins, update_losses, log_det: float, margin_errors: int
) -> float:
    """Crammer, Kulesza & Dredze (2009), Theorem 2, at one comparator u:
    √(r‖u‖² + Σ_{t∈A} (u·x_t)²)·√(ln det(I + X_A/r) + U) + Σ_{t∈A} g_t − U.

    ``update_margins`` are y_t u·x_t over the update rounds A (so uᵀX_A u is the sum of their
    squares), ``update_losses`` g_t there, ``margin_errors`` U (the updates without a mistake).
    """
    margins = np.asarray(update_margins, dtype=np.float64)
    spread = r * u_sq_norm + float(margins @ margins)
    hinge = float(np.sum(update_losses))
    return math.sqrt(spread) * math.sqrt(max(log_det, 0.0) + margin_errors) + hinge - margin_errors


def _learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "arow":
        return "not an AROW learner"
    if learner.diagonal:
        return "the diagonal variant: the theorem is about the full covariance"
    if not learner.zero_init_:
        return "the learner did not start from μ = 0"
    if facts.X is None:
        return "the training rows are not at hand (the bound reads the update rounds)"
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


def _value(facts: RunFacts) -> BoundValue:
    learner = facts.learner
    margins, radius = augmented_geometry(facts)
    gamma = stated_gamma(margins, radius, facts.presentations)
    rows = np.asarray(learner.update_indices_, dtype=np.int64)
    scaled = margins[rows] / gamma  # y_t u·x'_t at u = u'/γ
    losses = np.maximum(1.0 - scaled, 0.0)
    r = float(learner.r)
    log_det = mistake_log_det(facts.X, rows, float(learner.bias_feature_), r)
    errors = int(learner.updates_) - int(learner.mistakes_)
    value = arow_bound(r, 1.0 / gamma**2, scaled, losses, log_det, errors)
    details = {"gamma": gamma, "log_det": log_det, "margin_errors": float(errors)}
    return BoundValue(value, details)


REGISTRY.append(
    BoundSpec(
        "arow",
        _applies,
        _value,
        family=A_POSTERIORI,
        sequence=True,
        source=Source(
            NOT_READ,
            "the form of Crammer, Kulesza & Dredze 2009 (NIPS 22) Thm 2, not proved in lincls; "
            "not read (its public copies at hand"
            " show only the abstract and opening: reference, papers)",
        ),
    )
)
