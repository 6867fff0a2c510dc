"""Mohri and Rostamizadeh's data-dependent perceptron bound, computed after the run.

Mohri & Rostamizadeh, "Perceptron mistake bounds", arXiv:1305.0208 (2013), Theorem 3: with I the
set of mistake rounds, for any ρ > 0 and ‖u‖ ≤ 1,

    M ≤ L_ρ(u) + √(Σ_{t∈I} ‖x_t‖²) / ρ,   L_ρ(u) = Σ_{t∈I} (1 − y_t u·x_t/ρ)₊.

The infimum over ρ says nothing (it tends to M as ρ grows, because the right side depends on I),
so it is logged at a stated ρ: the certificate's margin when it separates (then L_ρ = 0 and the
bound is ≤ Novikoff's (R/γ)²), otherwise the γ at which Freund–Schapire's bound is smallest.
Computed on the vectors the learner sees, (x, c) for a bias feature c. The paper's statement was
not read (the reference's papers page says what of it was read, and where): this is its form as
quoted, checked numerically only; its registry status is "not read".
"""

from __future__ import annotations

import numpy as np

from lincls.bounds import _best
from lincls.bounds._registry import (
    A_POSTERIORI,
    NOT_READ,
    REGISTRY,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.bounds.deficit import (
    _fs_applies,
    _fs_learner,
    augmented_geometry,
    freund_schapire_grid,
)


def mohri_rostamizadeh(sq_norms: np.ndarray, mistake_margins: np.ndarray, rho: float) -> float:
    """Mohri & Rostamizadeh (2013), Theorem 3: L_ρ(u) + √(Σ_{t∈I} ‖x_t‖²)/ρ.

    ``sq_norms`` and ``mistake_margins`` (y_t u·x_t, u of norm ≤ 1) list the mistake rounds I,
    one entry per mistake (an example that is missed twice appears twice).
    """
    hinge = np.maximum(1.0 - np.asarray(mistake_margins, dtype=np.float64) / rho, 0.0)
    return float(hinge.sum() + np.sqrt(np.sum(sq_norms)) / rho)


def _mr_applies(facts: RunFacts) -> str | None:
    reason = _fs_applies(facts)
    if reason:
        return reason
    if facts.sq_norms is None:
        return "the norms of the examples are unknown"
    return None


def _mr_value(facts: RunFacts) -> BoundValue:
    margins, radius = augmented_geometry(facts)
    rows = facts.learner.mistake_indices_
    if margins.shape[0] and margins.min() > 0.0:
        rho = float(margins.min())
    else:
        _, rho, _ = freund_schapire_grid(radius, margins, facts.presentations)
    sq = facts.sq_norms[rows] + facts.learner.bias_feature_**2
    return BoundValue(mohri_rostamizadeh(sq, margins[rows], rho), {"rho": rho})


def _mr_best(facts: RunFacts) -> BoundValue | str:
    """At the best comparators of Novikoff (when the vectors separate: ρ its margin) and of
    Freund–Schapire (ρ its γ), each a unit u on the vectors (x, c) the learner sees: the smaller.
    """
    reason = _fs_learner(facts) or (
        "the norms of the examples are unknown" if facts.sq_norms is None else None
    )
    if reason:
        return reason
    rows = facts.learner.mistake_indices_
    sq = facts.sq_norms[rows] + facts.learner.bias_feature_**2
    best: BoundValue | str = "no best comparator"
    for found in (_best.separator(facts), _best.deficit(facts)):
        if isinstance(found, str):
            best = found if isinstance(best, str) else best
            continue
        norm = float(np.sqrt(found.solution.v @ found.solution.v))
        if norm == 0.0:
            continue
        unit_margins = found.margins * (found.radius / norm)  # y u·x' for u = v/‖v‖
        rho = found.radius / norm
        value = mohri_rostamizadeh(sq, unit_margins[rows], rho)
        if isinstance(best, str) or value < best.value:
            best = BoundValue(value, {"rho": rho, "radius": found.radius, "gap": found.gap})
    return best


REGISTRY.append(
    BoundSpec(
        "mohri_rostamizadeh",
        _mr_applies,
        _mr_value,
        best=_mr_best,
        family=A_POSTERIORI,
        source=Source(
            NOT_READ,
            "the form of Mohri & Rostamizadeh 2013 (arXiv:1305.0208) Thm 3, not proved in lincls; "
            "not read (its public copies at hand"
            " show only the abstract and opening: reference, papers)",
        ),
    )
)
