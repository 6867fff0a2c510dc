"""Mohri and Rostamizadeh's data-dependent perceptron bound, computed after the run.

Mohri & Rostamizadeh, "Perceptron mistake bounds", arXiv:1305.0208 (2013), Theorem 3: with I the
set of mistake rounds, for any ρ > 0 and ‖u‖ ≤ 1,

    M ≤ L_ρ(u) + √(Σ_{t∈I} ‖x_t‖²) / ρ,   L_ρ(u) = Σ_{t∈I} (1 − y_t u·x_t/ρ)₊.

The infimum over ρ says nothing (it tends to M as ρ grows, because the right side depends on I),
so it is logged at a stated ρ: the certificate's margin when it separates (then L_ρ = 0 and the
bound is ≤ Novikoff's (R/γ)²), otherwise the γ at which Freund–Schapire's bound is smallest.
Computed on the vectors the learner sees, (x, c) for a bias feature c.
"""

from __future__ import annotations

import numpy as np

from lincls.bounds._registry import REGISTRY, BoundSpec, BoundValue, RunFacts
from lincls.bounds.deficit import _fs_applies, augmented_geometry, freund_schapire_grid


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


REGISTRY.append(BoundSpec("mohri_rostamizadeh", _mr_applies, _mr_value))
