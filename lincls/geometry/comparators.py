"""Best comparators: the convex programs whose minima are the mistake bounds over every comparator.

A mistake bound holds for every comparator u (and margin γ); written in v = u/γ (so ‖v‖ = 1/γ)
on the rows z_t = y_t·x'_t of the vectors x' the learner sees, most bounds are convex in v:

- ``hard_margin``: min ‖v‖² s.t. z_t·v ≥ 1 (a hard-margin SVM through the origin). Novikoff's
  (R'‖v*‖)², the margin perceptron's and PA's separable bound; with Kesler's rows, the
  multiclass perceptron's and MIRA's (a Crammer–Singer multiclass SVM). With an offset outside
  the norm, the hard-margin SVM itself: the data's maximum-margin certificates
  (``lincls.geometry.certificates``) come from this program too.
- ``deficit``: min ‖v‖ + ‖(1 − Zv)₊‖_k on rows scaled to radius 1, ‖a‖_k² = Σ_t k_t a_t² (k_t
  the presentations of row t): Freund and Schapire's (R + D)/γ over every (u, γ).
- ``hinge``: min ‖v‖² + 2C Σ_t k_t ℓ_t (PA-I) or ‖v‖² + 2C Σ_t k_t ℓ_t² (PA-II), ℓ_t the hinge
  loss (1 − z_t·v)₊.
- ``kernel_hard_margin``: the hard-margin problem in a kernel's feature space, in dual form from
  the matrix Q_st = y_s y_t K'(x_s, x_t); the comparator is Σ_t β_t φ'(x_t). It has its own
  working set (``KERNEL_WORKING_SET``), on which only Q's columns of the set are computed, and
  solves it by block principal pivoting, with Clarabel where that fails.

The smooth ones (``deficit``, and ``hinge`` with the squared loss) are minimised exactly by
Newton's method (``lincls.geometry.newton``), the hard margin by a dual active-set method
(``lincls.geometry.active_set``), the rest with Clarabel (an interior-point conic solver), as are
those the exact methods do not close (a gap above ``NEWTON_GAP``). A point is then
only a candidate: its objective is re-measured on the data (a comparator that misses a constraint is
rescaled until it meets every one), and a dual point built from its multipliers, made exactly
feasible, gives a lower bound on the minimum. ``Solution.gap`` is their relative difference: the
re-measured value is a valid bound whatever the solver did, and no comparator does better than
value·(1 − gap). Clarabel solves on a working set (``lincls.geometry.programs``): the rows nearest
the margin of a cheap proxy of the solution (at least 200, four per column), grown by the rows the
set's solution violates until none does (a row that meets its margin has a zero multiplier, so
that is the minimum over all rows). At n = 1,000, d = 20 (a sweep's runs, a busy 2-core machine)
the deficit's cone program took 74 ms on every row, Newton's method 3 ms; the hard margin 21 ms
on every row, 5 ms from a set of 200; PA-I's hinge 28 ms on every row, 6 ms from a set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import clarabel
import numpy as np
import scipy.linalg
import scipy.sparse as sp

from lincls.geometry import active_set, newton
from lincls.geometry.kkt import dual_bound, polished, rescaled
from lincls.geometry.programs import SOLVE_METHOD as SOLVE_METHOD
from lincls.geometry.programs import (
    deficit_rows,
    hard_margin_rows,
    hinge_rows,
    nearest,
    subset,
    working_set,
)
from lincls.geometry.programs import solve as _solve

GAP_TOLERANCE = 1e-6  # the relative duality gap a solution is expected to reach
NEWTON_GAP = 1e-12  # the gap at which Newton's point is kept (else Clarabel solves the program)
KERNEL_WORKING_SET = 200  # rows a kernel problem starts from, and the fewest added per round
KERNEL_SOLVE_METHOD = "faer"  # on the dense kernel matrix (``_kernel_dual``)
KERNEL_PIVOTS = 30  # block principal pivoting rounds before Clarabel takes over
PIVOT_GAP = 1e-9  # the relative gap a pivoting point must reach (else Clarabel solves it)


@dataclass(frozen=True)
class Solution:
    """A comparator, its re-measured objective and the relative gap to a dual lower bound.

    ``v`` is the comparator (for ``kernel_hard_margin``: the coefficients β of Σ β_t φ'(x_t)),
    already rescaled so that it meets every constraint where the problem has constraints.
    """

    v: np.ndarray
    value: float
    gap: float


def _relative_gap(value: float, lower: float) -> float:
    return max(0.0, (value - lower) / value) if value > 0.0 else 0.0


def hard_margin(Z, offset: np.ndarray | None = None) -> Solution | None:
    """min ‖v‖² s.t. z_t·v ≥ 1 for every row z_t of Z; None when no v is found (not separable).

    ``value`` is ‖v‖² of the re-measured comparator (rescaled so that min_t z_t·v = 1). The dual
    of min ‖v‖²/2 s.t. Zv ≥ 1 is max Σα − ‖Zᵀα‖²/2 over α ≥ 0; at its best scaling a point α ≥ 0
    gives (Σα)²/(2‖Zᵀα‖²), so ‖v*‖² ≥ (Σα)²/‖Zᵀα‖² for the solver's multipliers α, clipped at 0.

    ``offset`` (the labels ±1 of the rows z_t = y_t·x_t) adds an offset b outside the norm: min
    ‖w‖² s.t. z_t·w + y_t·b ≥ 1, the hard-margin SVM with an offset (``v`` is then (w, b)). The
    solver's b is not kept: the best b for its w, (min_{y=−1} z·w − min_{y=+1} z·w)/2, is set
    before rescaling. Its dual adds Σα_t y_t = 0, which the multipliers are made to meet by
    scaling each class's to their mean sum; the bound is then the same (Σα)²/‖Zᵀα‖², since
    Σα_t(z_t·w + y_t b) = w·Zᵀα ≤ ‖w‖‖Zᵀα‖ for every feasible (w, b).

    Goldfarb and Idnani's dual active-set method (``lincls.geometry.active_set``) guesses the
    support vectors, and its point is polished (``lincls.geometry.kkt.polished``): the KKT
    equations solved exactly on those rows, then pivoted. Where the polished point's gap is above
    ``NEWTON_GAP`` or the method declines, Clarabel solves the program on a working set, from the
    rows nearest the margin of a proxy (``lincls.geometry.programs.nearest``; a set it finds
    infeasible is followed by every row), and its point is polished the same way: the interior
    point's own accuracy suffers on badly conditioned rows (a nearly collinear cloud: gaps of
    ~1e-6). The best re-measured point is kept, and the largest of the dual bounds. Both routes
    polish on the same support, so they log the same numbers (``tests/test_active_set.py``);
    the active set costs 0.3 ms at n = 100, d = 20, Clarabel's 2.3 ms.
    """
    found = _hard_margin(Z, offset)
    return None if found is None else found[0]


def _hard_margin(Z, offset: np.ndarray | None) -> tuple[Solution, np.ndarray] | None:
    """``hard_margin``'s Solution and the multipliers of its dual bound (clipped at 0)."""
    if Z.shape[0] == 0:
        return None
    y = None if offset is None else np.asarray(offset, dtype=np.float64)
    if y is not None and not (np.any(y > 0.0) and np.any(y < 0.0)):
        return None  # one class: no finite margin to certify
    rows = Z
    if y is not None:
        rows = (
            sp.hstack([Z, y[:, None]], format="csr")
            if sp.issparse(Z)
            else np.hstack([Z, y[:, None]])
        )
    free = 0 if y is None else 1
    whole = rows.shape[0] * rows.shape[1] <= active_set.WHOLE_CELLS  # cheaper than a set's ranking
    first = None if whole else nearest(rows)
    exact = working_set(
        rows, lambda r: active_set.hard_margin_point(subset(rows, r), free), _short, first
    )
    if exact is not None:
        kept = _kept(Z, y, *exact, guess=True)
        if kept is not None and kept[0].gap <= NEWTON_GAP:
            return kept
    found = working_set(
        rows,
        lambda r: hard_margin_rows(subset(rows, r), free=free),
        _short,
        nearest(rows) if whole else first,
    )
    return None if found is None else _kept(Z, y, *found)


def _short(margins: np.ndarray) -> np.ndarray:
    return margins < 1.0


def _kept(Z, y: np.ndarray | None, v: np.ndarray, alpha: np.ndarray, guess: bool = False
          ) -> tuple[Solution, np.ndarray] | None:  # fmt: skip
    """The best re-measured of a solver's point (v, α) and its polished points, bounded by the
    largest of their dual bounds, with that bound's multipliers; None if none separates. A
    ``guess`` (the active set's point) only marks the support vectors: its polished points are
    the candidates, as they are an interior point's (which it rarely beats)."""
    best, lower, dual = None, 0.0, np.maximum(alpha, 0.0)
    points = polished(Z, y, alpha)
    for w, multipliers in points if guess else [(v[: Z.shape[1]], alpha), *points]:
        measured = rescaled(Z, y, w)
        if measured is not None and (best is None or measured[2] < best[2]):
            best = measured
        bound = dual_bound(Z, y, multipliers)
        if bound > lower:
            lower, dual = bound, np.maximum(multipliers, 0.0)
    if best is None:
        return None
    w, b, value = best
    solution = Solution(w if y is None else np.append(w, b), value, _relative_gap(value, lower))
    return solution, dual


def deficit_objective(margins: np.ndarray, counts: np.ndarray, v: np.ndarray) -> float:
    """‖v‖ + ‖(1 − m)₊‖_k for the margins m_t = z_t·v of v on rows of radius ≤ 1."""
    short = np.maximum(1.0 - margins, 0.0)
    return float(np.sqrt(v @ v) + np.sqrt(np.sum(counts * short * short)))


def deficit(Z, counts: np.ndarray) -> Solution:
    """min over v of ‖v‖ + ‖(1 − Zv)₊‖_k, the rows of Z of norm ≤ 1 (scaled by the radius).

    With Z = y·x'/R' this is Freund and Schapire's (R' + D)/γ at u = v/‖v‖, γ = 1/‖v‖ (D summed
    over every presentation, k_t of row t): its square is their bound at the best (u, γ). Rows
    with k_t = 0 were never presented and must be left out by the caller. The lower bound is the
    dual max Σα s.t. α ≥ 0, ‖α/√k‖ ≤ 1, ‖Zᵀα‖ ≤ 1 at the solver's multipliers, scaled into it.
    The minimum may be v = 0 (γ → ∞), where the value √(Σk) is the trivial count. Newton's
    method (``lincls.geometry.newton.deficit``) first; where it finds the minimum at a deficit of 0,
    the hard margin's v_hm (the minimum exactly when its multipliers fit the dual: then α_hm,
    Zᵀα_hm = v_hm, gives the lower bound Σα_hm/‖v_hm‖ = ‖v_hm‖); Clarabel's cone program where
    the gap is above ``NEWTON_GAP``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if Z.shape[1] <= newton.COLUMNS:
        found = newton.deficit(Z, counts)
        if found == newton.KINK:  # no deficit at the minimum: v* = v_hm when ‖α_hm/√k‖ ≤ ‖v_hm‖
            separator = _hard_margin(Z, None)
            found = None if separator is None else (separator[0].v, separator[1])
        if found is not None:
            solution = _deficit_solution(Z, counts, *found)
            if solution.gap <= NEWTON_GAP:
                return solution
    root = np.sqrt(counts)
    found = working_set(
        Z,
        lambda rows: deficit_rows(subset(Z, rows), root[rows]),
        lambda m: m < 1.0,
        nearest(Z, counts),
    )
    v, alpha = found if found is not None else (np.zeros(Z.shape[1]), np.zeros(Z.shape[0]))
    return _deficit_solution(Z, counts, v, alpha)


def _deficit_solution(Z, counts: np.ndarray, v: np.ndarray, alpha: np.ndarray) -> Solution:
    """The deficit's re-measured ``Solution`` at v (or at 0, if better), bounded by α."""
    margins = np.asarray(Z @ v).ravel()
    value = deficit_objective(margins, counts, v)
    zero = float(np.sqrt(counts.sum()))
    if zero < value:  # the trivial comparator v = 0 is better than the solver's point
        v, value = np.zeros_like(v), zero
    aZ = np.asarray(Z.T @ alpha).ravel()
    scale = max(float(np.sqrt(aZ @ aZ)), float(np.sqrt(np.sum(alpha * alpha / counts))))
    lower = float(alpha.sum() / scale) if scale > 0.0 else 0.0
    return Solution(v, value, _relative_gap(value, lower))


def hinge_objective(margins: np.ndarray, counts: np.ndarray, v: np.ndarray, C: float,
                    squared: bool) -> float:  # fmt: skip
    """‖v‖² + 2C Σ_t k_t ℓ_t (or ℓ_t² when ``squared``), ℓ_t = (1 − m_t)₊, m_t = z_t·v."""
    loss = np.maximum(1.0 - margins, 0.0)
    return float(v @ v + 2.0 * C * np.sum(counts * (loss * loss if squared else loss)))


def hinge(Z, counts: np.ndarray, C: float, squared: bool) -> Solution:
    """min over v of ‖v‖² + 2C Σ_t k_t ℓ_t (PA-I) or ‖v‖² + 2C Σ_t k_t ℓ_t² (PA-II, ``squared``).

    ℓ_t = (1 − z_t·v)₊, k_t the presentations of row t (rows with k_t = 0 left out by the
    caller). The dual (v = Zᵀα/2) is Σα − ‖Zᵀα‖²/4 over 0 ≤ α_t ≤ 2Ck_t, or
    Σα − ‖Zᵀα‖²/4 − Σ α_t²/(8Ck_t) over α ≥ 0 for the squared loss: evaluated at the solver's
    multipliers, projected onto those sets, it is the lower bound. The squared loss's minimum is
    Newton's (``lincls.geometry.newton.squared_hinge``, α = 4Ck_tℓ_t) where its gap is at most
    ``NEWTON_GAP``, else Clarabel's.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if squared and Z.shape[1] <= newton.COLUMNS:
        found = newton.squared_hinge(Z, counts, 2.0 * C)
        if found is not None:
            solution = _hinge_solution(Z, counts, C, True, found[0], 4.0 * C * counts * found[1])
            if solution.gap <= NEWTON_GAP:
                return solution
    found = working_set(
        Z,
        lambda rows: hinge_rows(subset(Z, rows), counts[rows], C, squared),
        lambda m: m < 1.0,
        nearest(Z, counts, 2.0 * C),
    )
    v, alpha = found if found is not None else (np.zeros(Z.shape[1]), np.zeros(Z.shape[0]))
    return _hinge_solution(Z, counts, C, squared, v, alpha)


def _hinge_solution(Z, counts: np.ndarray, C: float, squared: bool, v: np.ndarray,
                    alpha: np.ndarray) -> Solution:  # fmt: skip
    """The hinge program's re-measured ``Solution`` at v (or at 0, if better), bounded by α."""
    value = hinge_objective(np.asarray(Z @ v).ravel(), counts, v, C, squared)
    zero = hinge_objective(np.zeros(Z.shape[0]), counts, np.zeros(Z.shape[1]), C, squared)
    if zero < value:
        v, value = np.zeros_like(v), zero
    if not squared:
        alpha = np.minimum(alpha, 2.0 * C * counts)
    aZ = np.asarray(Z.T @ alpha).ravel()
    lower = float(alpha.sum() - 0.25 * (aZ @ aZ))
    if squared:
        lower -= float(np.sum(alpha * alpha / (8.0 * C * counts)))
    return Solution(v, value, _relative_gap(value, lower))


def _pivoting(Q: np.ndarray, free: np.ndarray) -> np.ndarray | None:
    """min ½αᵀQα − Σα over α ≥ 0 by block principal pivoting, from ``free``, a guess of the rows
    with α > 0; None when a block is not numerically positive definite or it does not end.

    Each round solves Q_FF α_F = 1 on the guess F (α = 0 elsewhere) and swaps every row that
    breaks the KKT conditions (α_t < 0 in F, (Qα)_t < 1 outside it); when their count has not
    fallen for three rounds, only the last such row is swapped (Murty's rule, which ends for a
    positive definite Q; Júdice and Pires 1994, the safeguard as in Kim and Park 2011). Exact to
    rounding where it ends, and one factorisation when every row is a support vector.
    """
    m = Q.shape[0]
    free = free.copy()
    fewest, chances = m + 1, 3
    for _ in range(KERNEL_PIVOTS):
        alpha = np.zeros(m)
        rows = np.flatnonzero(free)
        if rows.shape[0]:
            try:
                factor = scipy.linalg.cho_factor(Q[np.ix_(rows, rows)], check_finite=False)
            except np.linalg.LinAlgError:
                return None
            alpha[rows] = scipy.linalg.cho_solve(factor, np.ones(rows.shape[0]),
                                                 check_finite=False)  # fmt: skip
        if not np.all(np.isfinite(alpha)):
            return None
        wrong = np.where(free, alpha < 0.0, Q @ alpha < 1.0 - 1e-12)
        count = int(np.count_nonzero(wrong))
        if count == 0:
            return alpha
        if count < fewest:
            fewest, chances = count, 3
        elif chances > 0:
            chances -= 1
        else:
            last = np.flatnonzero(wrong)[-1]
            wrong[:] = False
            wrong[last] = True
        free ^= wrong
    return None


def _dual_gap(Q: np.ndarray, alpha: np.ndarray) -> float:
    """The relative gap of multipliers ``alpha`` on Q, as ``_kernel_solution`` measures it."""
    margins = Q @ alpha
    low, norm_sq = float(margins.min()), float(alpha @ margins)
    if not (low > 0.0 and norm_sq > 0.0):
        return np.inf
    return _relative_gap(norm_sq / low**2, float(alpha.sum() ** 2 / norm_sq))


def _kernel_dual(Q: np.ndarray, free: np.ndarray) -> np.ndarray | None:
    """min ½αᵀQα − Σα over α ≥ 0 for a dense Q, from a guess ``free`` of the rows with α > 0, or
    None.

    Block principal pivoting first (``_pivoting``): on a positive definite Q it is exact and
    ~10× faster than the interior point (RBF, n = 2,000, d = 20). Where it fails (a Q that is
    singular or nearly so: polynomial kernels, RBF rows close together) or its point's gap is
    above ``PIVOT_GAP``, Clarabel solves it; faer's supernodal factorisation works on dense
    blocks, ~3× faster than qdldl on a dense Q at n = 1,000.
    """
    alpha = _pivoting(Q, free)
    if alpha is not None and _dual_gap(Q, alpha) <= PIVOT_GAP:
        return alpha
    n = Q.shape[0]
    result = _solve(sp.triu(sp.csc_matrix(Q), format="csc"), -np.ones(n),
                    -sp.identity(n, format="csc"), np.zeros(n),
                    [clarabel.NonnegativeConeT(n)], method=KERNEL_SOLVE_METHOD)  # fmt: skip
    alpha = np.maximum(np.asarray(result.x, dtype=np.float64), 0.0)
    return alpha if np.all(np.isfinite(alpha)) and alpha.any() else None


def _kernel_solution(alpha: np.ndarray, margins: np.ndarray, rows: np.ndarray) -> Solution | None:
    """The re-measured Solution of multipliers ``alpha`` on ``rows`` (0 elsewhere), from the
    margins Qα of every row."""
    low = float(margins.min())
    norm_sq = float(alpha @ margins[rows])  # αᵀQα, α zero outside the rows
    if not (low > 0.0 and norm_sq > 0.0):
        return None
    beta = np.zeros(margins.shape[0])
    beta[rows] = alpha / low
    value = norm_sq / low**2
    lower = float(alpha.sum() ** 2 / norm_sq)
    return Solution(beta, value, _relative_gap(value, lower))


def kernel_hard_margin(
    Q: np.ndarray | Callable[[np.ndarray], np.ndarray], n: int | None = None
) -> Solution | None:
    """The hard-margin problem in feature space, from Q_st = y_s y_t K'(x_s, x_t): None if no
    separator is found.

    ``Q`` is the n×n matrix, or a function ``Q(rows)`` returning its columns Q[:, rows] (an n×k
    array for an index array of k rows), with ``n`` given: then only the columns of the working
    set are ever computed. Solves the dual min ½αᵀQα − Σα over α ≥ 0; the comparator is
    U = Σ_t α_t y_t φ'(x_t), with functional margins Qα and ‖U‖² = αᵀQα, both re-measured.
    ``v`` holds α rescaled so that min_t (Qα)_t = 1 and ``value`` is then αᵀQα = ‖U‖²; the
    lower bound is the dual at its best scaling, (Σα)²/αᵀQα.

    Problems of more than ``KERNEL_WORKING_SET`` rows are solved on a working set: evenly spaced
    rows first, then, each round, the rows whose margin under the set's solution is below 1
    (the smallest first, at most max(``KERNEL_WORKING_SET``, half the set) of them), until none
    is. The set's α, zero elsewhere, is then feasible for the whole dual and its margins meet
    every row, so it is the whole problem's minimum (the KKT conditions hold on every row).
    """
    columns = Q if callable(Q) else (lambda rows: Q[:, rows])
    n = int(Q.shape[0] if n is None else n)
    if n == 0:
        return None
    rows = np.arange(n)
    if n > KERNEL_WORKING_SET:
        rows = np.unique(np.linspace(0, n - 1, KERNEL_WORKING_SET).round().astype(np.int64))
    C = np.asarray(columns(rows), dtype=np.float64)  # Q[:, rows], grown with the set
    free = np.ones(rows.shape[0], dtype=bool)  # the guess of the support vectors
    while True:
        alpha = _kernel_dual(C[rows], free)
        if alpha is None:
            return None
        margins = C @ alpha
        outside = np.ones(n, dtype=bool)
        outside[rows] = False
        missed = np.flatnonzero(outside & (margins < 1.0))
        if missed.shape[0] == 0:
            return _kernel_solution(alpha, margins, rows)
        most = max(KERNEL_WORKING_SET, rows.shape[0] // 2)
        added = missed[np.argsort(margins[missed], kind="stable")[:most]]
        rows = np.concatenate((rows, added))
        C = np.hstack((C, np.asarray(columns(added), dtype=np.float64)))
        # the set's support vectors (an interior point's α is nowhere exactly 0) and the new rows
        free = np.concatenate((alpha > 1e-9 * alpha.max(), np.ones(added.shape[0], dtype=bool)))


def kernel_hard_margin_dense(Q: np.ndarray) -> Solution | None:
    """``kernel_hard_margin`` on every row at once (no working set, qdldl): the reference the
    working set is checked and timed against."""
    n = Q.shape[0]
    if n == 0:
        return None
    result = _solve(sp.triu(sp.csc_matrix(Q), format="csc"), -np.ones(n),
                    -sp.identity(n, format="csc"), np.zeros(n),
                    [clarabel.NonnegativeConeT(n)])  # fmt: skip
    alpha = np.maximum(np.asarray(result.x, dtype=np.float64), 0.0)
    if not np.all(np.isfinite(alpha)) or not alpha.any():
        return None
    return _kernel_solution(alpha, Q @ alpha, np.arange(n))
