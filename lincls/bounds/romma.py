"""ROMMA's mistake bound (Li & Long 2002, "The Relaxed Online Maximum Margin Algorithm", Machine
Learning 46, 361–387): ROMMA and aggressive ROMMA from w = 0 make at most (R/γ)² mistakes on any
sequence with ‖x_t‖ ≤ R that a unit u separates with margin γ — Novikoff's bound.

Why (the paper's argument, as checked here): u/γ meets every constraint y v·x ≥ 1, and each w_t
is the shortest vector of a set holding u/γ, so ‖w_t‖ ≤ 1/γ; every update's set lies in
{v : v·w_t ≥ ‖w_t‖²}, so ‖w_{t+1}‖² ≥ ‖w_t‖² + ‖w_{t+1} − w_t‖², and on a mistake the step
reaches y v·x_t ≥ 1 from y w_t·x_t ≤ 0, a distance ≥ 1/R. Hence M/R² ≤ ‖w‖² ≤ 1/γ². The
aggressive updates without a mistake only add to ‖w‖².

Computed on the vectors x' = (x, c) the learner sees (c = 1 with ``bias="feature"``): the
certificate (u, b) gives the unit separator (u, b/c)/√(1 + b²/c²) there (``novikoff_bias``).
The bound falls as γ grows, and the separators of the presented rows form a convex set, so its
best comparator is the hard-margin SVM through the origin of those x' (``_best.separator``).
"""

from __future__ import annotations

from lincls.bounds import _best
from lincls.bounds._registry import DERIVED, REGISTRY, BoundSpec, BoundValue, RunFacts, Source
from lincls.bounds.perceptron import novikoff, novikoff_bias


def romma_bound(radius: float, margin: float) -> float:
    """Li & Long (2002): (aggressive) ROMMA from w = 0 makes at most (R/γ)² mistakes.

    For any order and number of passes, ‖x_t‖ ≤ R and a unit u with y_t u·x_t ≥ γ > 0.
    """
    return novikoff(radius, margin)


def _romma_learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "romma":
        return "not a ROMMA learner"
    if not learner.zero_init_:
        return "the learner did not start from w = 0"
    return None


def _applies(facts: RunFacts) -> str | None:
    reason = _romma_learner(facts)
    if reason:
        return reason
    cert = facts.certificate
    if cert is None:
        return "no certificate (separator) for the data"
    if not cert.separates:
        return "the certificate does not separate the data"
    if facts.learner.bias_feature_ == 0.0 and not cert.homogeneous:
        return "the separator has an offset b ≠ 0 and the learner has no bias"
    return None


def _value(facts: RunFacts) -> float:
    cert, c = facts.certificate, float(facts.learner.bias_feature_)
    if c == 0.0:
        return romma_bound(facts.radius, cert.margin)
    return novikoff_bias(facts.radius, cert.margin, cert.b, c)


def best_romma(facts: RunFacts) -> BoundValue | str:
    """(R'/γ')² at the largest margin γ' of the presented vectors x' (a hard-margin SVM)."""
    reason = _romma_learner(facts)
    if reason:
        return reason
    found = _best.separator(facts)
    if isinstance(found, str):
        return found
    return BoundValue(romma_bound(found.radius, found.margin), _best.details(found))


REGISTRY.append(
    BoundSpec(
        "romma",
        _applies,
        _value,
        best=best_romma,
        source=Source(
            DERIVED,
            "proved in the module docstring; Li & Long 2002 (Machine Learning 46) state the "
            "perceptron's bound for ROMMA (only the abstract was read)",
        ),
    )
)
