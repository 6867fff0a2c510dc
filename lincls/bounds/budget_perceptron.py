"""A bound on the Randomized Budget Perceptron's *expected* mistakes (``lincls/learners/
budget_perceptron.py``), over its random discards, for a fixed sequence.

Cavallanti, Cesa-Bianchi & Gentile, "Tracking the best hyperplane with a simple budget
Perceptron", Machine Learning 69 (2007), 143–167, bound the expected mistakes of this rule
against shifting comparators of norm U = Θ(√B) (their abstract: "our randomized algorithm
strikes the optimal trade-off U = Θ(√B) between budget B and norm U of the largest classifier in
the comparison sequence"). The theorem's exact statement could not be checked against the
paper's text, so nothing here is attributed to it: the bound below, for one fixed comparator, is
derived in this docstring by the same kind of argument (the expected progress of a uniformly
random discard) and checked numerically (``tests/test_budget_perceptron_bound.py``).

What it bounds: E[M], the expectation over the discards (each a uniform draw among the B support
vectors, independent of the past) of the mistakes on a sequence fixed in advance. A single run
may exceed it; it is compared with the mean over many seeds of runs on the same sequence. The
sequence may be any order drawn independently of the discards (a shuffled order): the bound
reads only each example's presentations, so it is the same for every order.

Derivation. Let φ_t = x'_t (the vectors (x, c) the learner sees; any kernel's features would
do), ‖φ_t‖ ≤ R', f = Σ_{s∈S} y_s φ_s, a comparator w with hinge losses ℓ_t(w) = (1 − y_t w·φ_t)₊,
and Δ_t = ‖w − f_t‖² − ‖w − f_{t+1}‖². On a mistake without a discard, Δ_t = 2y_t w·φ_t −
2y_t f_t(x_t) − ‖φ_t‖² ≥ 2(1 − ℓ_t(w)) − R'². On a mistake discarding r (S full, |S| = B):
E_r[y_r w·φ_r] = w·f_t/B, E_r[y_r f_t(x_r)] = ‖f_t‖²/B and E_r[y_r y_t φ_r·φ_t] = y_t f_t(x_t)/B,
so E_r[Δ_t] = 2y_t w·φ_t − 2(1 − 1/B)y_t f_t(x_t) + 2(‖f_t‖² − w·f_t)/B − E_r‖φ_r‖² − ‖φ_t‖²
≥ 2(1 − ℓ_t(w)) − 2R'² − ‖w‖²/(2B) (‖f‖² − w·f ≥ −‖w‖²/4). Whether a round is a mistake is
known before its draw, so summing the conditional expectations, ‖w‖² ≥ E[Σ_t Δ_t] ≥
(2 − 2R'² − ‖w‖²/(2B))·E[M] − 2L, L the hinge losses summed over every presentation (at least
those of the mistake rounds). The rule is unchanged by scaling the kernel (α = ±1, only signs
are read): applied to φ/√q with the comparator √q·w (the same margins), for every q > 0,

    E[M] ≤ (q‖w‖² + 2L) / (2 − 2R'²/q − q‖w‖²/(2B))   wherever the denominator is > 0,

which needs R'‖w‖ < √B (the least of 2R'²/q + q‖w‖²/(2B) is 2R'‖w‖/√B): the √B trade-off.
At w = 0 it tends to L, the count of presentations. Every q gives a bound: a grid of q is used.

The best comparator: for each q the bound is a ratio of a convex function of w over a concave
one, not convex in w; it is evaluated at w = s·u (u a certificate's unit augmented separator)
over 200 scales s with R's < √B, and 1/γ where u separates with margin γ and R'/γ < √B.

Not in the bounds registry: the registry's mistake bounds are compared with each run's own
mistakes (a run above its bound is flagged a violation), which an expectation does not bound.
"""

from __future__ import annotations

import math

import numpy as np

SCALES = 200  # comparator scales s (w = s·u) tried at a certificate
GRID = 400  # kernel scales q tried per comparator


def rbp_expected_bound(
    comparator_norm_sq: float, hinge_sum: float, radius_sq: float, budget: int
) -> float:
    """E[M] ≤ min over q of (q‖w‖² + 2L)/(2 − 2R'²/q − q‖w‖²/(2B)) (module docstring), over a
    grid of q inside the interval where the denominator is positive; L at w = 0, ∞ where no q
    is (R'‖w‖ ≥ √B)."""
    n, L, r2, b = float(comparator_norm_sq), float(hinge_sum), float(radius_sq), float(budget)
    if n == 0.0:
        return L
    disc = 1.0 - n * r2 / b
    if disc <= 0.0:
        return math.inf
    # the denominator's roots in q: (2B/‖w‖²)(1 ± √(1 − R'²‖w‖²/B))
    low, high = (2.0 * b / n) * (1.0 - math.sqrt(disc)), (2.0 * b / n) * (1.0 + math.sqrt(disc))
    q = np.geomspace(low, high, GRID + 2)[1:-1]
    room = 2.0 - 2.0 * r2 / q - q * n / (2.0 * b)
    values = np.where(room > 0.0, (q * n + 2.0 * L) / np.where(room > 0.0, room, 1.0), np.inf)
    return float(values.min())


def rbp_bound_at_certificate(
    margins: np.ndarray, presentations: np.ndarray, radius: float, budget: int
) -> tuple[float, float]:
    """(bound, s): ``rbp_expected_bound`` at the best w = s·u over ``SCALES`` scales with
    R's < √B, and s = 1/γ where u separates (``margins`` y_t u·x'_t of the unit augmented
    separator, ``presentations`` each example's count, ``radius`` R')."""
    margins = np.asarray(margins, dtype=np.float64)
    counts = np.asarray(presentations, dtype=np.float64)
    cap = math.sqrt(budget) / radius
    scales = cap * np.geomspace(1e-6, 1.0, SCALES, endpoint=False)
    if margins.shape[0] and margins.min() > 0.0 and 1.0 / margins.min() < cap:
        scales = np.r_[scales, 1.0 / margins.min()]
    losses = np.maximum(1.0 - scales[:, None] * margins[None, :], 0.0) @ counts
    values = [
        rbp_expected_bound(s * s, h, radius * radius, budget)
        for s, h in zip(scales, losses, strict=True)
    ]
    best = int(np.argmin(values))
    return float(values[best]), float(scales[best])


__all__ = ["rbp_bound_at_certificate", "rbp_expected_bound"]
